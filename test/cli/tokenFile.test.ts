/**
 * Issue 20, part 2: `muse` and `muse-host` read a token file by one rule (packages/protocol/src/tokenFile.ts).
 * A real `muse-host serve --ws --token-file F` child and the real `muse` CLI with the same
 * `--token-file F`, where F has a comment line, spaces around the token and CRLF line ends: muse
 * must connect (exit 0), not get 401 (exit 3).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebSocketHost, type WebSocketHostProcess } from "../host/webSocketHostProcess.js";
import { modelPath, runMuse, tempDir, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const TOKEN = "shared-token-0123456789";
let temp: ReturnType<typeof tempDir>;
let host: WebSocketHostProcess | undefined;

beforeAll(() => {
  temp = tempDir("muse-token-file-");
});
afterAll(async () => {
  await host?.stop();
  temp.remove();
});

describe("one token file, read alike by muse and muse-host", () => {
  it("a comment line, surrounding spaces and CRLF: muse-host serves the token and muse connects with it (exit 0)", async () => {
    const file = join(temp.dir, "token");
    writeFileSync(file, `# the muse-host token, shared with muse\r\n\r\n   ${TOKEN}  \t\r\n`, { mode: 0o600 });
    host = await startWebSocketHost(["--script", JSON.parse(modelPath("hello")) as string, "--token-file", file]);
    const result = await runMuse(bundles(), ["info", "--ws", host.url, "--token-file", file]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(host.token).toBe(TOKEN);
  }, 60_000);

  it("a file with only comments and blank lines: each names the file and says there is no token", async () => {
    const file = join(temp.dir, "no-token");
    writeFileSync(file, "# only a comment\n   \n");
    const result = await runMuse(bundles(), ["info", "--ws", "ws://127.0.0.1:9/msp", "--token-file", file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`muse: --token-file ${file}: no token in it (every line is empty or a # comment)\n`);
  }, 60_000);
});
