/**
 * What one streamed message costs on the wire: the reference host (a real child process, stdio,
 * NDJSON) streams one message of L characters in 16-character chunks with no delay, and this
 * counts every byte the host sends from `turn/start` to its `turn/completed`, the item
 * notifications among them, and the SDK's CPU time on the receiving side. The baseline of issue 19
 * (streaming deltas), whose target is a cost per character flat in L and at most 40 bytes.
 *
 * Usage: npx tsx bench/streamCost.ts [L …]   (default: 2000 20000 200000; STREAM_COST_STDERR=1 shows the host's stderr)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ByteChannel } from "../src/index.js";
import { spawnReferenceHost } from "../src/node/index.js";

const CHUNK = 16;
const lengths = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), "stream-cost-"));

/** A message of `length` characters: words of varied length, so no chunk is like the next. */
function messageOf(length: number): string {
  let text = "";
  for (let i = 0; text.length < length; i++) text += `word${i % 97} `;
  return text.slice(0, length);
}

/** `channel`, with every byte it receives counted into `counter.bytes`. */
function counted(channel: ByteChannel, counter: { bytes: number }): ByteChannel {
  return {
    ...channel,
    onData: (listener) =>
      channel.onData((chunk) => {
        counter.bytes += chunk.byteLength;
        listener(chunk);
      }),
  };
}

async function measure(length: number): Promise<string> {
  const script = join(dir, `message-${length}.json`);
  writeFileSync(
    script,
    JSON.stringify({ description: `one message of ${length} characters`, turns: [{ steps: [{ text: messageOf(length), chunkSize: CHUNK }] }] }),
  );
  const received = { bytes: 0 };
  await using host = spawnReferenceHost({
    script,
    stderr: process.env["STREAM_COST_STDERR"] === "1" ? "inherit" : "ignore",
    wrapChannel: (channel) => counted(channel, received),
    maxMessageBytes: 64 * 1024 * 1024,
  });
  const { sessionId } = await host.command("session/create", {});
  let updates = 0;
  host.events.on("item/updated", () => (updates += 1));
  const before = received.bytes;
  const cpu = process.cpuUsage();
  const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "write" }] }, { timeoutMs: 600_000 });
  const ended = await turn.waitForTerminal({ timeoutMs: 600_000 });
  const used = process.cpuUsage(cpu);
  const bytes = received.bytes - before;
  const [item] = host.items.itemsOf(ended.turnId);
  if (item?.kind !== "message" || item.text.length !== length)
    throw new Error(`the message arrived with ${item?.kind === "message" ? item.text.length : "no"} characters, not ${length}`);
  const perChar = (n: number) => (n / length).toFixed(1);
  return `| ${length.toLocaleString("en")} | ${updates.toLocaleString("en")} | ${(bytes / 1e6).toFixed(2)} MB | ${perChar(bytes)} | ${((used.user + used.system) / length).toFixed(2)} µs |`;
}

try {
  console.log(`one message streamed in ${CHUNK}-character chunks by the reference host over stdio (NDJSON), node ${process.version}`);
  console.log("| L (characters) | item/updated | wire bytes, turn/start to turn/completed | bytes per character | SDK CPU per character |");
  console.log("|---|---|---|---|---|");
  for (const length of lengths.length > 0 ? lengths : [2_000, 20_000, 200_000]) {
    // A run the host cannot finish is a row too: it says what ended it.
    console.log(
      await measure(length).catch(
        (error: unknown) => `| ${length.toLocaleString("en")} | – | – | – | failed: ${error instanceof Error ? error.message : String(error)} |`,
      ),
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
