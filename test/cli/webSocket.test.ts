/**
 * `muse --ws`: the CLI over a real WebSocket (the `ws` class on Node 20), its token as a
 * `Sec-WebSocket-Protocol` entry from --token-file or MUSE_HOST_TOKEN, and --record of its frames.
 * The server is a small bridge (stdioGateway.ts) that checks the token and the `msp.v1`
 * subprotocol, and relays each connection's frames to its own reference host over stdio. A second
 * server (sharedHostServer.ts) attaches every connection to one in-process reference host, so two
 * muse processes share a session: `muse resume` follows a turn another muse started, and stops it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkTranscript } from "../../src/testing/index.js";
import { createHost } from "../../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { jsonLines } from "./jsonLines.js";
import { modelPath, runMuse, startMuse, tempDir, useMuseBundles } from "./museProcess.js";
import { serveSharedHost, type SharedHostServer } from "./sharedHostServer.js";
import { serveStdioGateway, type StdioGateway } from "./stdioGateway.js";

const bundles = useMuseBundles();
const TOKEN = "s3cret token ✓";
const bearer = `bearer.msp.${Buffer.from(TOKEN, "utf8").toString("base64url")}`;
let gateway: StdioGateway;
let url: string;
let temp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  temp = tempDir("muse-ws-");
  gateway = await serveStdioGateway([bundles().host, "serve", "--stdio", "--script", JSON.parse(modelPath("cli-demo")) as string], {
    verifyClient: ({ req }: { req: { headers: Record<string, string | string[] | undefined> } }) =>
      String(req.headers["sec-websocket-protocol"] ?? "")
        .split(",")
        .map((p) => p.trim())
        .includes(bearer),
  });
  url = gateway.url;
});
afterAll(async () => {
  await gateway.close();
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

describe("muse resume over a shared host", () => {
  let shared: SharedHostServer;

  beforeAll(async () => {
    shared = await serveSharedHost(
      createHost({ models: new Map([["default", loadScriptedModel(JSON.parse(modelPath("run-tests")) as string, "default")]]), defaultModel: "default" }),
    );
  });
  afterAll(() => shared.close());

  it("follows a turn another muse is running, and its Ctrl-C stops it for both (130 each, one terminal)", async () => {
    const runner = startMuse(bundles(), ["run", "run the tests", "--json", "--ws", shared.url]);
    const deadline = Date.now() + 10_000;
    await runner.waitFor((ran) => ran.includes("test 2 ... ok"), deadline - Date.now());
    const sessionId = (JSON.parse(runner.output().split("\n")[0] as string) as { sessionId: string }).sessionId;

    const follower = startMuse(bundles(), ["resume", "--session", sessionId, "--ws", shared.url]);
    // Live lines after the replay: the follower is following.
    await follower.waitFor((followed) => /test (\d+) \.\.\. ok\n[^]*test \d+ \.\.\. ok\n/.test(followed.split("replaying")[1] ?? ""), deadline - Date.now());
    follower.child.kill("SIGINT");

    expect((await follower.result).code).toBe(130);
    expect((await runner.result).code).toBe(130);
    const followed = follower.output();
    expect(followed).toMatch(/^session [0-9a-f-]{36}\nreplaying \d+ notifications\nturn [0-9a-f-]{36} started\nRunning the test suite\.\n/);
    expect(followed).toMatch(
      /\nstopping…\n[^]*\n {2}\| SIGTERM: stopping the test run\n[^]*\n {2}= cancelled: turn cancelled\nturn cancelled: you stopped it \(cancelled during tool execution\) after \d+\.\d s\n$/,
    );
    const events = jsonLines<{ type: string; method?: string; params?: Record<string, unknown> }>(runner.output());
    const terminals = events.filter((e) => e.method === "turn/completed");
    expect(terminals).toHaveLength(1);
    expect(terminals[0]?.params).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect(events.at(-1)).toEqual({ type: "exit", code: 130 });
  });
});
