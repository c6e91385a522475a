/**
 * runCheck over a WebSocket (webSocketForCheck, the wire tap's recording WebSocket class): a
 * test-only gateway (the ws package) gives each connection its own reference host child and
 * relays one message per text frame to its NDJSON stdio. Every scenario passes, the frames are
 * recorded both ways, and the malformed scenario's raw frames reach the host.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { runCheck, webSocketForCheck } from "../../src/node/cli/check/index.js";
import type { WebSocketConstructor } from "../../src/transports/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
let server: WebSocketServer;
let url: string;
const hosts = new Set<ChildProcess>();

beforeAll(async () => {
  server = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: (offered) => (offered.has("msp.v1") ? "msp.v1" : false) });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  url = `ws://127.0.0.1:${(server.address() as { port: number }).port}/msp`;
  server.on("connection", (socket) => {
    const host = spawn(
      process.execPath,
      [bundles().host, "serve", "--stdio", "--script", join(repoRoot, "models/hello.json"), "--model", `msp-check=${join(repoRoot, "models/check.json")}`],
      { stdio: ["pipe", "pipe", "ignore"] },
    );
    hosts.add(host);
    host.on("exit", () => {
      hosts.delete(host);
      socket.close();
    });
    host.stdin.on("error", () => {});
    createInterface({ input: host.stdout, crlfDelay: Infinity }).on("line", (line) => socket.send(line));
    socket.on("message", (data) => host.stdin.write(`${String(data)}\n`));
    socket.on("close", () => host.stdin.end());
  });
});

afterAll(async () => {
  for (const host of hosts) host.kill("SIGKILL");
  await new Promise((resolve) => server.close(resolve));
});

describe("runCheck over a WebSocket", () => {
  it("passes on the reference host behind a WebSocket gateway, recording every frame", async () => {
    const lines: string[] = [];
    const outcome = await runCheck({
      open: webSocketForCheck(url, { WebSocket: WebSocket as unknown as WebSocketConstructor }),
      out: (line) => lines.push(line),
      color: false,
      timeoutMs: 15_000,
    });
    expect(outcome.results.filter((r) => !r.passed).map((r) => [r.scenario, r.problems])).toEqual([]);
    expect(outcome.passed).toBe(true);
    const malformed = outcome.results.find((r) => r.scenario === "malformed input");
    expect(malformed?.wire.filter((l) => l.dir === "client").map((l) => l.raw)).toEqual(expect.arrayContaining(["this is not JSON", "[]"]));
    expect(malformed?.wire.some((l) => l.dir === "server" && l.raw.includes("-32700"))).toBe(true);
    expect(lines.join("\n")).toMatch(/muse check: all 14 scenarios passed/);
  }, 90_000);
});
