/**
 * `muse --ws`: the CLI over a real WebSocket (the `ws` class on Node 20), its token as a
 * `Sec-WebSocket-Protocol` entry from --token-file or MUSE_HOST_TOKEN, and --record of its frames.
 * The server is a small bridge in this file: a `ws` server that checks the token and the `msp.v1`
 * subprotocol, and relays each connection's frames to its own reference host over stdio.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkTranscript } from "../../src/testing/index.js";
import { modelPath, runMuse, tempDir, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const TOKEN = "s3cret token ✓";
const bearer = `bearer.msp.${Buffer.from(TOKEN, "utf8").toString("base64url")}`;
let server: WebSocketServer;
let url: string;
let temp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  temp = tempDir("muse-ws-");
  server = new WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    verifyClient: ({ req }: { req: { headers: Record<string, string | string[] | undefined> } }) =>
      String(req.headers["sec-websocket-protocol"] ?? "")
        .split(",")
        .map((p) => p.trim())
        .includes(bearer),
    handleProtocols: (protocols: Set<string>) => (protocols.has("msp.v1") ? "msp.v1" : false),
  });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/msp`;
  server.on("connection", (socket) => {
    const host = spawn(process.execPath, [bundles().host, "serve", "--stdio", "--script", JSON.parse(modelPath("cli-demo")) as string], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    createInterface({ input: host.stdout }).on("line", (line) => socket.send(line));
    socket.on("message", (data) => host.stdin.write(`${String(data)}\n`));
    socket.on("close", () => host.stdin.end());
    host.on("exit", () => socket.close());
  });
});
afterAll(async () => {
  for (const client of server.clients) client.terminate();
  await new Promise((resolve) => server.close(resolve));
  temp.remove();
});

describe("muse --ws", () => {
  it("runs a turn with the token from --token-file, and --record writes the frames as a transcript checkTranscript accepts", async () => {
    const tokenFile = join(temp.dir, "token");
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const record = join(temp.dir, "ws.jsonl");
    const result = await runMuse(bundles(), ["run", "check the build", "--ws", url, "--token-file", tokenFile, "--record", record]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^session [0-9a-f-]{36} \(model default\)\n[^]*\n {2}\| build ok\n[^]*\nturn completed: completed after \d+\.\d s\n$/);
    expect(checkTranscript(readFileSync(record, "utf8"))).toEqual({ ok: true, problems: [] });
  });

  it("takes the token from MUSE_HOST_TOKEN (muse info)", async () => {
    const result = await runMuse(bundles(), ["info", "--ws", url], { env: { MUSE_HOST_TOKEN: TOKEN } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("name              muse-host\n");
  });

  it("a refused handshake (no token, wrong token) cannot connect: one line, exit 3", async () => {
    for (const env of [{}, { MUSE_HOST_TOKEN: "wrong" }]) {
      const result = await runMuse(bundles(), ["info", "--ws", url], { env: { MUSE_HOST_TOKEN: "", ...env } });
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(
        /^muse: cannot connect: connectWebSocket: the WebSocket handshake failed: Unexpected server response: 401 \(WebSocket close code 1006\)\n$/,
      );
    }
  });

  it("an unreadable --token-file is one line, exit 1", async () => {
    const result = await runMuse(bundles(), ["info", "--ws", url, "--token-file", join(temp.dir, "missing")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`muse: cannot read --token-file ${join(temp.dir, "missing")}: ENOENT\n`);
  });
});
