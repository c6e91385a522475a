/**
 * `muse-host serve --ws` beyond the gate, against real host children: the token's sources
 * (`--token-file`, `MUSE_HOST_TOKEN`, random), `--ui` static files (GET/HEAD only, fixed types,
 * nothing outside the directory), a shutdown that still delivers terminals, and
 * `spawnReferenceHost({webSocket})`.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { ToolCallItem } from "../../src/index.js";
import { bearerSubprotocol, MSP_SUBPROTOCOL } from "../../packages/protocol/src/index.js";
import { exampleModelPath, spawnReferenceHost } from "../../src/node/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { fixture } from "./hostProcess.js";
import { occurrences, rawRequest, startWebSocketHost, upgradeRequest, wsClient, type WebSocketHostProcess } from "./webSocketHostProcess.js";

const input = [{ type: "text" as const, text: "go" }];
const hosts: WebSocketHostProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
});
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "muse-ws-host-"));
  dirs.push(dir);
  return dir;
}

async function start(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<WebSocketHostProcess> {
  const host = await startWebSocketHost(args, env);
  hosts.push(host);
  return host;
}

/** A model whose shell tool prints the token variable the host was started with (it must be gone). */
function envModel(dir: string): string {
  const path = join(dir, "env.json");
  writeFileSync(
    path,
    JSON.stringify({ turns: [{ steps: [{ toolCalls: [{ tool: "shell", args: { command: 'echo "token=[${MUSE_HOST_TOKEN-unset}]"' } }] }] }] }),
  );
  return path;
}

describe("the token's sources", () => {
  it("--token-file: its first line is the token; the ready line carries it, once, in the fragment", async () => {
    const dir = tempDir();
    const file = join(dir, "token");
    writeFileSync(file, "file token/with+odd=chars\nsecond line ignored\n");
    const host = await start(["--script", fixture("hello.json"), "--token-file", file]);
    expect(host.token).toBe("file token/with+odd=chars");
    expect(host.stderr()).toContain(`muse-host: open http://127.0.0.1:${host.port}/#token=${encodeURIComponent(host.token)}\n`);
    const client = await wsClient(host.url, { token: host.token });
    expect(await client.command("host/info", {})).toMatchObject({ name: "muse-host" });
    await client.close();
  });

  it("MUSE_HOST_TOKEN: used, then removed from the host's environment, so its tools never see it", async () => {
    const dir = tempDir();
    const host = await start(["--script", envModel(dir)], { ...process.env, MUSE_HOST_TOKEN: "  env-token-0123456789  " });
    expect(host.token).toBe("env-token-0123456789");
    const client = await wsClient(host.url, { token: host.token });
    const { sessionId } = await client.command("session/create", {});
    const terminal = await client.startTurn({ sessionId, input }).waitForTerminal({ timeoutMs: 10_000 });
    const tool = client.items.itemsOf(terminal.turnId).find((i): i is ToolCallItem => i.kind === "toolCall");
    expect(tool?.visibleOutput).toBe("token=[unset]\n");
    await client.close();
  });

  it("no source: 32 random bytes, base64url, different for each host", async () => {
    const [one, two] = await Promise.all([start(["--script", fixture("hello.json")]), start(["--script", fixture("hello.json")])]);
    for (const host of [one, two]) expect(host.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(one?.token).not.toBe(two?.token);
  });

  it("an unreadable or empty token file: one line naming the file, never a token, exit 2", () => {
    const dir = tempDir();
    const empty = join(dir, "empty");
    writeFileSync(empty, "\n");
    for (const [file, why] of [
      [join(dir, "missing"), "ENOENT"],
      [empty, "no token in it (every line is empty or a # comment)"],
    ] as const) {
      const run = spawnSync(
        process.execPath,
        ["--import", "tsx", "packages/host/src/serve/main.ts", "serve", "--ws", "0", "--script", fixture("hello.json"), "--token-file", file],
        {
          cwd: repoRoot,
          encoding: "utf8",
          timeout: 20_000,
        },
      );
      expect(run.status).toBe(2);
      expect(run.stderr).toBe(`muse-host: --token-file ${file}: ${why}\n`);
    }
  });
});

describe("--ui: the Stop-button app's files", () => {
  let ui: string;
  let host: WebSocketHostProcess;
  const get = (path: string, method = "GET", hostHeader?: string) =>
    rawRequest(host.port, `${method} ${path} HTTP/1.1\r\nHost: ${hostHeader ?? `127.0.0.1:${host.port}`}\r\nConnection: close\r\n\r\n`);

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-ws-ui-"));
    dirs.push(dir);
    ui = join(dir, "ui");
    mkdirSync(join(ui, "assets"), { recursive: true });
    writeFileSync(join(ui, "index.html"), "<!doctype html><title>Stop</title><script type=module src=app.js></script>\n");
    writeFileSync(join(ui, "app.js"), "console.log('app');\n");
    writeFileSync(join(ui, "assets", "style.css"), "body{}\n");
    writeFileSync(join(ui, "notes.unknown"), "not served\n");
    writeFileSync(join(dir, "secret.js"), "outside\n");
    symlinkSync(join(dir, "secret.js"), join(ui, "link.js"));
    host = await startWebSocketHost(["--script", fixture("hello.json"), "--ui-dir", ui]);
  }, 30_000);
  afterAll(async () => {
    await host?.stop();
  });

  it("serves index.html at / and the files beside it, with fixed content types, no token needed", async () => {
    const index = await get("/");
    expect(index.status).toBe(200);
    expect(index.head).toMatch(/^Content-Type: text\/html; charset=utf-8$/im);
    expect(index.head).toMatch(/^X-Content-Type-Options: nosniff$/im);
    expect(index.head).toMatch(/^Referrer-Policy: no-referrer$/im);
    expect(index.body).toContain("<title>Stop</title>");
    expect((await get("/index.html")).status).toBe(200);
    const app = await get("/app.js");
    expect(app.head).toMatch(/^Content-Type: text\/javascript; charset=utf-8$/im);
    expect((await get("/assets/style.css")).head).toMatch(/^Content-Type: text\/css; charset=utf-8$/im);
    // The page a person opens: the fragment never reaches the server, the path is just /.
    expect((await get(`/`, "GET", `localhost:${host.port}`)).status).toBe(200);
  });

  it("HEAD has the headers and no body; other methods get 405", async () => {
    const head = await get("/app.js", "HEAD");
    expect(head.status).toBe(200);
    expect(head.head).toMatch(/^Content-Length: 20$/im);
    expect(head.body).toBe("");
    for (const method of ["POST", "PUT", "DELETE", "OPTIONS"]) {
      const answer = await get("/", method);
      expect(answer.status, method).toBe(405);
      expect(answer.head).toMatch(/^Allow: GET, HEAD$/im);
    }
  });

  it("nothing outside the directory: .., encoded .., backslashes, links out, unknown types, directories", async () => {
    for (const path of [
      "/../secret.js",
      "/assets/../../secret.js",
      "/%2e%2e/secret.js",
      "/%2E%2E%2Fsecret.js",
      "/..%5csecret.js",
      "/assets%5c..%5c..%5csecret.js",
      "/link.js",
      "/notes.unknown",
      "/assets",
      "/missing.js",
      "/%00.js",
      "/%zz.js",
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).not.toContain("outside");
    }
  });

  it("the same Host check as the socket: a rebinding name gets 403", async () => {
    expect((await get("/", "GET", `evil.example:${host.port}`)).status).toBe(403);
  });

  it("--ui with no index.html in the directory: one line, exit 2", () => {
    const empty = tempDir();
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "packages/host/src/serve/main.ts", "serve", "--ws", "0", "--script", fixture("hello.json"), "--ui-dir", empty],
      {
        cwd: repoRoot,
        encoding: "utf8",
        timeout: 20_000,
      },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`muse-host: --ui: no index.html in ${empty} (build the app with npm run build, or pass --ui-dir DIR)\n`);
  });

  it("without --ui a page request gets 426 and no file", async () => {
    const plain = await start(["--script", fixture("hello.json")]);
    const answer = await rawRequest(plain.port, `GET / HTTP/1.1\r\nHost: 127.0.0.1:${plain.port}\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(426);
  });
});

describe("frames and addresses", () => {
  it("a binary frame is answered with -32600 and the connection stays open", async () => {
    const host = await start(["--script", fixture("hello.json")]);
    const socket = new WebSocket(host.url, [MSP_SUBPROTOCOL, bearerSubprotocol(host.token)]);
    const messages: Array<Record<string, unknown>> = [];
    socket.on("message", (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    socket.send(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "host/info", params: {} })), { binary: true });
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "host/info", params: {} }));
    const deadline = Date.now() + 5_000;
    while (messages.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(messages[0]).toMatchObject({ id: null, error: { code: -32600 } });
    expect(messages[1]).toMatchObject({ id: 2, result: { name: "muse-host" } });
    socket.close();
  });

  it("--ws 0.0.0.0 with --allow-remote: this machine's addresses pass the Host check, a DNS name does not", async () => {
    // The later --ws wins over the helper's 127.0.0.1:0; the ready line names 127.0.0.1 for a wildcard.
    const wildcard = await start(["--ws", "0.0.0.0:0", "--allow-remote", "--script", fixture("hello.json")]);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal);
    const token = wildcard.token;
    if (external !== undefined) {
      expect((await rawRequest(wildcard.port, upgradeRequest(wildcard.port, { token, host: `${external.address}:${wildcard.port}` }))).status).toBe(101);
    }
    expect((await rawRequest(wildcard.port, upgradeRequest(wildcard.port, { token }))).status).toBe(101);
    expect((await rawRequest(wildcard.port, upgradeRequest(wildcard.port, { token, host: `evil.example:${wildcard.port}` }))).status).toBe(403);
  });
});

describe("shutdown", () => {
  it("SIGTERM mid-turn: the WebSocket client gets the cancelled terminal (cause disposed), then close 1001; exit 0", async () => {
    const host = await start(["--script", exampleModelPath("run-tests")]);
    const client = await wsClient(host.url, { token: host.token });
    const { sessionId } = await client.command("session/create", {});
    const turn = client.startTurn({ sessionId, input });
    await turn.accepted;
    await new Promise((resolve) => setTimeout(resolve, 300));
    host.child.kill("SIGTERM");
    const terminal = await turn.waitForTerminal({ timeoutMs: 10_000 });
    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "disposed" } });
    expect(await client.closed).toMatchObject({ closeCode: 1001 });
    expect(await host.exited).toEqual({ code: 0, signal: null });
    expect(occurrences(host.stderr(), host.token)).toBe(1);
  });
});

describe("spawnReferenceHost({ webSocket })", () => {
  it("resolves the URL and token from the ready line; a given token travels in the environment, not argv", async () => {
    const host = spawnReferenceHost({ stderr: "ignore", webSocket: { token: "given-token-abcdef" } });
    try {
      const ws = await host.webSocket;
      expect(ws).toMatchObject({ token: "given-token-abcdef", url: `ws://127.0.0.1:${ws.port}/msp` });
      expect(ws.pageUrl).toBe(`http://127.0.0.1:${ws.port}/#token=given-token-abcdef`);
      expect(host.process.spawnargs.join(" ")).not.toContain("given-token-abcdef");
      const client = await wsClient(ws.url, { token: ws.token });
      const { sessionId } = await client.command("session/create", {});
      expect((await client.startTurn({ sessionId, input }).waitForTerminal({ timeoutMs: 10_000 })).terminal).toBe("completed");
      await client.close();
    } finally {
      await host.close();
    }
  });

  it("rejects with the exit when the host cannot serve (a UI dir without index.html)", async () => {
    const host = spawnReferenceHost({ stderr: "ignore", webSocket: { uiDir: tempDir() } });
    try {
      await expect(host.webSocket).rejects.toThrow(/the host exited \(code 2\) before serving WebSocket/);
    } finally {
      await host.close();
    }
  });

  it("bad webSocket options throw at once", () => {
    expect(() => spawnReferenceHost({ webSocket: { port: 70_000 } })).toThrow(RangeError);
    expect(() => spawnReferenceHost({ webSocket: { token: "" } })).toThrow(TypeError);
  });
});
