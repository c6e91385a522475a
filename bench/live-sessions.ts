/**
 * The reference host's heap with many sessions loaded, against --max-live-sessions: an in-process
 * host (createHost, a temp data dir, one in-memory connection) creates N sessions, and the heap
 * retained after a forced GC is compared with before.
 *
 * Usage: node --expose-gc --import tsx bench/live-sessions.ts MAX_LIVE_SESSIONS [N=10000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHost } from "../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../packages/host/src/model/modelLoader.js";
const max = Number(process.argv[2]);
const n = Number(process.argv[3] ?? 10000);
const dir = mkdtempSync(join(tmpdir(), "livemem-"));
const host = createHost({
  models: new Map([["default", loadScriptedModel("packages/host/models/hello.json", "default")]]),
  defaultModel: "default",
  dataDir: dir,
  maxLiveSessions: max,
});
let onMessage: (t: string) => void = () => {};
let last: { result?: unknown } | undefined;
host.connect({
  onMessage: (cb) => (onMessage = cb),
  onClose: () => {},
  send: (m) => {
    last = m as { result?: unknown };
  },
  close: () => {},
});
global.gc!();
const h0 = process.memoryUsage().heapUsed;
for (let i = 1; i <= n; i++) onMessage(JSON.stringify({ jsonrpc: "2.0", id: i, method: "session/create", params: {} }));
await new Promise((r) => setTimeout(r, 200));
global.gc!();
const h1 = process.memoryUsage().heapUsed;
console.log(
  `max ${max}: ${n} sessions, heap +${((h1 - h0) / 1024 / 1024).toFixed(1)} MB (${((h1 - h0) / n / 1024).toFixed(2)} KiB/session), last ok: ${last?.result !== undefined}`,
);
await host.shutdown();
rmSync(dir, { recursive: true, force: true });
