/**
 * runCheck over a WebSocket (webSocketForCheck, the wire tap's recording WebSocket class): a
 * test-only gateway (stdioGateway.ts, on the ws package) gives each connection its own reference
 * host child and relays one message per text frame to its NDJSON stdio. Every scenario passes
 * but "restart mid-tree" and "shutdown mid-tool", which are not run (the check has no host process
 * to signal), the frames
 * are recorded both ways, and the malformed scenario's raw frames reach the host.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { runCheck, webSocketForCheck } from "../../packages/host/src/cli/check/index.js";
import type { WebSocketConstructor } from "../../src/websocket/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";
import { serveStdioGateway, type StdioGateway } from "./stdioGateway.js";

const bundles = useMuseBundles();
let gateway: StdioGateway;

beforeAll(async () => {
  gateway = await serveStdioGateway([
    bundles().host,
    "serve",
    "--stdio",
    "--script",
    join(repoRoot, "packages/host/models/hello.json"),
    "--model",
    `msp-check=${join(repoRoot, "packages/host/models/check.json")}`,
  ]);
});

afterAll(() => gateway.close());

describe("runCheck over a WebSocket", () => {
  it("passes on the reference host behind a WebSocket gateway, recording every frame", async () => {
    const lines: string[] = [];
    const outcome = await runCheck({
      open: webSocketForCheck(gateway.url, { WebSocket: WebSocket as unknown as WebSocketConstructor }),
      out: (line) => lines.push(line),
      color: false,
      timeoutMs: 15_000,
    });
    expect(outcome.results.filter((r) => !r.passed && r.notRun === undefined).map((r) => [r.scenario, r.problems])).toEqual([]);
    expect(outcome.passed).toBe(true);
    const malformed = outcome.results.find((r) => r.scenario === "malformed input");
    expect(malformed?.wire.filter((l) => l.dir === "client").map((l) => l.raw)).toEqual(expect.arrayContaining(["this is not JSON", "[]"]));
    expect(malformed?.wire.some((l) => l.dir === "server" && l.raw.includes("-32700"))).toBe(true);
    // The check did not spawn this host: it cannot shut it down, so "shutdown mid-tool" is not run (neither passed nor failed).
    const shutdown = outcome.results.find((r) => r.scenario === "shutdown mid-tool");
    expect(shutdown).toMatchObject({
      passed: false,
      problems: [],
      notRun: "the check did not spawn this host (it connected to it), so it cannot shut it down",
    });
    expect(lines.join("\n")).toMatch(
      /^shutdown mid-tool +N\/A +\d+ ms {2}\(not run: the check did not spawn this host \(it connected to it\), so it cannot shut it down\)$/m,
    );
    expect(lines.join("\n")).not.toMatch(/^FAIL shutdown mid-tool$/m);
    expect(outcome.results.find((r) => r.scenario === "restart mid-tree")).toMatchObject({
      passed: false,
      problems: [],
      notRun: expect.stringMatching(/did not spawn/) as unknown,
    });
    // The tree scenarios that need no process run over the WebSocket, child sessions' notifications and questions included.
    for (const name of ["stop a tree", "a child fails on its own", "a child's question withdrawn"]) {
      expect(outcome.results.find((r) => r.scenario === name)).toMatchObject({ passed: true, problems: [] });
    }
    expect(lines.join("\n")).toMatch(/muse check: all 28 scenarios run passed; 2 not run: restart mid-tree, shutdown mid-tool$/m);
  }, 90_000);
});
