/**
 * A retried `turn/steer` (same commandId) on the real host (`muse-host serve --stdio`, raw NDJSON)
 * is answered like the first attempt: only once the steering item is durable, so never before
 * that item's `item/started` (which the host sends right after the first answer).
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { useHostProcesses } from "./hostProcess.js";

const { start, tempDir } = useHostProcesses("muse-steer-retry-");
const model = join(import.meta.dirname, "..", "fixtures", "models", "steer-tool.json");

it("answers a retry sent before the first attempt's item is durable only after that item is (after its item/started)", async () => {
  const host = start(["--script", model, "--data", tempDir()]);
  const sessionId = (await host.request("session/create", {})).result?.["sessionId"] as string;
  const turnId = (await host.request("turn/start", { sessionId, input: [{ type: "text", text: "go" }] })).result?.["turnId"] as string;
  await host.waitFor((m) => m.method === "item/delta" && m.params?.["field"] === "visibleOutput", 10_000, "the tool's output");

  // The first attempt and its retry in one write: the retry reaches the host while the first waits for the log's sync.
  const commandId = "01a23400-0000-7000-8000-00000000aa01";
  const params = { sessionId, turnId, input: [{ type: "text", text: "use pnpm" }], commandId };
  host.writeLine(JSON.stringify({ jsonrpc: "2.0", id: "steer-1", method: "turn/steer", params }));
  host.writeLine(JSON.stringify({ jsonrpc: "2.0", id: "steer-2", method: "turn/steer", params }));
  const retry = await host.waitFor((m) => m.id === "steer-2" && m.method === undefined, 10_000, "the retry's answer");
  const first = await host.waitFor((m) => m.id === "steer-1" && m.method === undefined, 10_000, "the first answer");
  expect(retry.result).toEqual(first.result);
  expect(first.result).toMatchObject({ turnId, steerId: commandId });
  const started = host.indexOf((m) => m.method === "item/started" && (m.params?.["item"] as Record<string, unknown>)["steerId"] === commandId);
  expect(started).toBeGreaterThan(host.indexOf((m) => m.id === "steer-1"));
  expect(host.indexOf((m) => m.id === "steer-2")).toBeGreaterThan(started);
  // One steering item, however many attempts.
  expect(host.wire.filter((m) => m.method === "item/started" && (m.params?.["item"] as Record<string, unknown>)["steerId"] === commandId)).toHaveLength(1);
  await host.request("turn/cancel", { sessionId, turnId });
  await host.stop();
}, 30_000);
