/**
 * Session-table probe, run in a child `node --expose-gc --import tsx` by leaks.test.ts (issue 10,
 * finding 11): a real connection (NDJSON framing over an in-memory channel) hears of `count`
 * distinct session ids, each one followed (a command names it, and is answered) and each with a
 * notification, so every per-session table sees every id. Or, with `items`, `count` items of one
 * turn. Prints one JSON line: heap growth (heap plus ArrayBuffers, after a full GC) once all are
 * in, and again after close().
 *
 * Usage: sessions.script.ts <count> [sessions|items]
 *   node --expose-gc --import tsx test/leaks/sessions.script.ts 1000000
 */
import { connect, type ByteChannel } from "../../src/index.js";
import { heldMemory } from "./heldMemory.js";

const COUNT = Number(process.argv[2] ?? 100_000);
const MODE = process.argv[3] === "items" ? "items" : "sessions";
const BATCH = 1_000;

const held = async () => (await heldMemory()).total;

const enc = new TextEncoder();
const dec = new TextDecoder();
let feed: (chunk: Uint8Array) => void = () => {};
const answers: string[] = [];
const channel: ByteChannel = {
  onData: (listener) => ((feed = listener), () => (feed = () => {})),
  onEnd: () => () => {},
  onError: () => () => {},
  // The host: answer every command at once.
  write(bytes) {
    for (const line of dec.decode(bytes).split("\n")) {
      if (line === "") continue;
      const { id, params } = JSON.parse(line) as { id: number; params: { commandId: string } };
      answers.push(JSON.stringify({ jsonrpc: "2.0", id, result: { status: "accepted", commandId: params.commandId } }));
    }
  },
  end: () => {},
};

const sessionId = (i: number) => `0198f0aa-${String(i).padStart(12, "0").slice(0, 4)}-7000-8000-${String(i).padStart(12, "0")}`;
const TURN = "0198f0aa-0000-7000-8000-000000000001";

const main = async () => {
  const client = connect(channel);
  const before = await held();
  for (let start = 0; start < COUNT; start += BATCH) {
    const end = Math.min(COUNT, start + BATCH);
    const lines: string[] = [];
    const commands: Array<Promise<unknown>> = [];
    for (let i = start; i < end; i++) {
      if (MODE === "sessions") {
        const s = sessionId(i);
        commands.push(client.command("host/info", { sessionId: s }));
        lines.push(JSON.stringify({ jsonrpc: "2.0", method: "turn/started", params: { sessionId: s, viewCursor: `v:${s}:1`, turnId: `${s}-t` } }));
      } else {
        const item = { itemId: `item-${i}`, kind: "message", turnId: TURN, revision: 1, status: "completed", recordedAt: "2025-01-01T00:00:00Z", text: "x" };
        lines.push(JSON.stringify({ jsonrpc: "2.0", method: "item/completed", params: { sessionId: "s", viewCursor: `v:s:${i + 1}`, item } }));
      }
    }
    lines.push(...answers.splice(0));
    feed(enc.encode(`${lines.join("\n")}\n`));
    await Promise.all(commands);
  }
  const open = await held();
  const retained = {
    turnCount: client.items.turnCount,
    items: client.items.itemsOf(TURN).length,
    lastCursor: client.lastViewCursor(sessionId(COUNT - 1)),
  };
  await client.close();
  const closed = await held();
  console.log(
    JSON.stringify({
      mode: MODE,
      count: COUNT,
      heapGrowthMB: (open - before) / 1e6,
      heapGrowthAfterCloseMB: (closed - before) / 1e6,
      pending: client.pendingCount,
      ...retained,
    }),
  );
};
void main();
