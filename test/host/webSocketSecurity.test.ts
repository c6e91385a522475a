/**
 * Issue 9 §5: who gets into `muse-host serve --ws`, over real sockets on 127.0.0.1 against a real
 * host child process. Each refused request is refused before the upgrade, and after each case the
 * same host still serves its other clients: a witness connected from the start, and a new one.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { MspError, type MspClient } from "../../src/index.js";
import { bearerSubprotocol, HostCloseCodes, MSP_SUBPROTOCOL } from "../../packages/protocol/src/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { fixture } from "./hostProcess.js";
import { occurrences, rawRequest, startWebSocketHost, upgradeRequest, wsClient, type WebSocketHostProcess } from "./webSocketHostProcess.js";

const input = [{ type: "text" as const, text: "go" }];
let dir: string;
let host: WebSocketHostProcess;
let witness: MspClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "muse-ws-security-"));
  // A message that streams 12 MB in 3 000 appends (and its item/completed, 12 MB more): well past
  // what loopback TCP buffers hold for a client that reads nothing (a few MB).
  const flood = join(dir, "flood.json");
  writeFileSync(flood, JSON.stringify({ turns: [{ steps: [{ text: "flood of words ".repeat(800_000), chunkSize: 4_000 }] }] }));
  host = await startWebSocketHost([
    "--script",
    fixture("hello.json"),
    "--model",
    `flood=${flood}`,
    "--max-message-bytes",
    "65536",
    "--max-send-queue-bytes",
    "65536",
    "--stall-timeout-ms",
    "1000",
    "--allow-origin",
    "http://localhost:5173",
  ]);
  witness = await wsClient(host.url, { token: host.token });
}, 30_000);

afterAll(async () => {
  await witness?.close();
  await host?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The host still serves: the witness gets an answer, and a new client gets in and runs a turn to completed. */
async function stillServes(): Promise<void> {
  expect(await witness.command("host/info", {})).toMatchObject({ name: "muse-host" });
  const client = await wsClient(host.url, { token: host.token });
  try {
    const { sessionId } = await client.command("session/create", {});
    const terminal = await client.startTurn({ sessionId, input }).waitForTerminal({ timeoutMs: 10_000 });
    expect(terminal.terminal).toBe("completed");
  } finally {
    await client.close();
  }
}

/** What connectWebSocket rejects with. */
async function refusal(promise: Promise<MspClient>): Promise<MspError> {
  const outcome = await promise.then(
    async (client) => {
      await client.close();
      return undefined;
    },
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(MspError);
  return outcome as MspError;
}

describe("muse-host serve --ws: the token", () => {
  it("no token: 401 before the upgrade; the SDK client is refused with connectionClosed", async () => {
    const answer = await rawRequest(host.port, upgradeRequest(host.port));
    expect(answer.status).toBe(401);
    expect(answer.head).not.toMatch(/Upgrade: websocket/i);
    expect((await refusal(wsClient(host.url))).kind).toBe("connectionClosed");
    await stillServes();
  });

  it("wrong token (same length, shorter, longer, two bearer entries): 401", async () => {
    const same = host.token.slice(0, -1) + (host.token.endsWith("A") ? "B" : "A");
    for (const token of [same, "x", `${host.token}x`]) {
      expect((await rawRequest(host.port, upgradeRequest(host.port, { token }))).status, token).toBe(401);
    }
    const two = `${MSP_SUBPROTOCOL}, ${bearerSubprotocol(host.token)}, ${bearerSubprotocol("other")}`;
    expect((await rawRequest(host.port, upgradeRequest(host.port, { protocols: two }))).status).toBe(401);
    expect((await refusal(wsClient(host.url, { token: same }))).kind).toBe("connectionClosed");
    await stillServes();
  });

  it("the right token gets 101 with msp.v1 selected, never the bearer entry echoed back", async () => {
    const answer = await rawRequest(host.port, upgradeRequest(host.port, { token: host.token }));
    expect(answer.status).toBe(101);
    expect(answer.head).toMatch(/^Sec-WebSocket-Protocol: msp\.v1$/im);
    expect(answer.head).not.toContain("bearer");
    // A client that offers the token but not msp.v1 is refused.
    expect((await rawRequest(host.port, upgradeRequest(host.port, { protocols: bearerSubprotocol(host.token) }))).status).toBe(400);
  });

  it("the path is not routed: the upgrade is taken on /msp, / and any other path alike, and refused without the token on each", async () => {
    for (const path of ["/msp", "/", "/anything/else"]) {
      expect((await rawRequest(host.port, upgradeRequest(host.port, { path, token: host.token }))).status, path).toBe(101);
      expect((await rawRequest(host.port, upgradeRequest(host.port, { path }))).status, path).toBe(401);
    }
    await stillServes();
  });

  it("a token in the query string is refused, on the socket and the page, and never reaches stderr", async () => {
    const secret = encodeURIComponent(host.token);
    const onSocket = await rawRequest(host.port, upgradeRequest(host.port, { path: `/msp?token=${secret}`, token: host.token }));
    expect(onSocket.status).toBe(400);
    expect(onSocket.body).not.toContain(host.token);
    const onPage = await rawRequest(host.port, `GET /?token=${secret} HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nConnection: close\r\n\r\n`);
    expect(onPage.status).toBe(400);
    expect(onPage.body).not.toContain(host.token);
    expect((await refusal(wsClient(`${host.url}?token=${secret}`, { token: host.token }))).kind).toBe("connectionClosed");
    await stillServes();
    // Once, in the ready line; not in the refusal lines.
    expect(host.stderr()).toMatch(/refused a WebSocket: 400 query string/);
    expect(occurrences(host.stderr(), host.token)).toBe(1);
    expect(occurrences(host.stderr(), secret)).toBe(1);
  });
});

describe("muse-host serve --ws: browsers and DNS rebinding", () => {
  it("a forged Origin gets 403; the host's own origins, --allow-origin and no Origin at all get in", async () => {
    const token = host.token;
    for (const origin of ["http://evil.example", `http://evil.example:${host.port}`, "null", `https://127.0.0.1:${host.port}`, "http://localhost:5174"]) {
      const answer = await rawRequest(host.port, upgradeRequest(host.port, { token, origin }));
      expect(answer.status, origin).toBe(403);
    }
    for (const origin of [`http://127.0.0.1:${host.port}`, `http://localhost:${host.port}`, "http://localhost:5173", null]) {
      expect((await rawRequest(host.port, upgradeRequest(host.port, { token, origin }))).status, String(origin)).toBe(101);
    }
    await stillServes();
  });

  it("a forged Host gets 403 (a rebinding page's own name, no port, another port); loopback names get in", async () => {
    const token = host.token;
    for (const name of [`evil.example:${host.port}`, "127.0.0.1", `127.0.0.1:${host.port + 1}`, `127.0.0.2:${host.port}`, null]) {
      const answer = await rawRequest(host.port, upgradeRequest(host.port, { token, host: name }));
      expect(answer.status, String(name)).toBe(403);
      const page = await rawRequest(host.port, `GET / HTTP/1.1\r\n${name === null ? "" : `Host: ${name}\r\n`}Connection: close\r\n\r\n`);
      expect(page.status, `page, ${String(name)}`).toBe(name === null ? 400 : 403);
    }
    for (const name of [`localhost:${host.port}`, `LOCALHOST:${host.port}`, `[::1]:${host.port}`]) {
      expect((await rawRequest(host.port, upgradeRequest(host.port, { token, host: name }))).status, name).toBe(101);
    }
    await stillServes();
  });
});

describe("muse-host serve --ws: resources", () => {
  it("a frame over the message limit closes that connection with 1009; the others go on", async () => {
    const socket = new WebSocket(host.url, [MSP_SUBPROTOCOL, bearerSubprotocol(host.token)]);
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    socket.on("error", () => {});
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "host/info", params: { pad: "x".repeat(70_000) } }));
    expect(await closed).toBe(HostCloseCodes.messageTooBig);
    await stillServes();
  });

  it("a client that stops reading is disconnected (4008) once it drains nothing for --stall-timeout-ms, while another client's turn completes", async () => {
    const slow = new WebSocket(host.url, [MSP_SUBPROTOCOL, bearerSubprotocol(host.token)]);
    await new Promise((resolve, reject) => {
      slow.once("open", resolve);
      slow.once("error", reject);
    });
    slow.on("error", () => {});
    const created = new Promise<string>((resolve) =>
      slow.on("message", (data) => {
        const message = JSON.parse(String(data)) as { id?: number; result?: { sessionId?: string } };
        if (message.id === 1) resolve(message.result?.sessionId ?? "");
      }),
    );
    slow.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: { model: "flood" } }));
    const sessionId = await created;
    const closed = new Promise<number>((resolve) => slow.once("close", (code) => resolve(code)));
    // From here on the client reads nothing: the kernel's buffers fill, then the host's queue.
    (slow as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    slow.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "turn/start", params: { sessionId, input } }));
    // Meanwhile another client runs its own turn to the end.
    const other = await wsClient(host.url, { token: host.token });
    try {
      const { sessionId: mine } = await other.command("session/create", {});
      expect((await other.startTurn({ sessionId: mine, input }).waitForTerminal({ timeoutMs: 10_000 })).terminal).toBe("completed");
    } finally {
      await other.close();
    }
    const deadline = Date.now() + 15_000;
    while (!/closed a WebSocket connection that is not reading/.test(host.stderr()) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(host.stderr()).toMatch(
      /closed a WebSocket connection that is not reading: no progress for \d+ ms with \d+ bytes held for it \(stall timeout 1000 ms, close 4008/,
    );
    (slow as unknown as { _socket: { resume(): void } })._socket.resume();
    // The close frame follows what was already in flight; a client that took over a second to come back finds the socket dropped.
    expect([HostCloseCodes.sendQueueFull, 1006]).toContain(await closed);
    await stillServes();
  }, 40_000);
});

describe("muse-host serve --ws: the bind address", () => {
  it("--ws 0.0.0.0:PORT without --allow-remote: one stderr line, exit 2, nothing served", () => {
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "packages/host/src/serve/main.ts", "serve", "--ws", "0.0.0.0:0", "--script", fixture("hello.json")],
      {
        cwd: repoRoot,
        encoding: "utf8",
        timeout: 20_000,
      },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      "muse-host: refusing to listen on 0.0.0.0, which is not a loopback address: pass --allow-remote to allow other machines (and put a TLS proxy in front)\n",
    );
    expect(run.stdout).toBe("");
  });
});
