/**
 * Chunking probe, run in a child `node --expose-gc --import tsx` by leaks.test.ts (issue 10,
 * finding 8): a message of `size` bytes reaches a real connection one byte per chunk, each chunk
 * its own object as a stream would give it. Before its last byte, the reader holds it pending;
 * the probe measures what that costs (heap plus ArrayBuffers, after a full GC), then sends the
 * last byte and checks the message arrives whole. Prints one JSON line.
 *
 * Usage: chunking.script.ts <ndjson|content-length> <size in bytes>
 */
import { MspClient, type ByteChannel } from "../../src/index.js";
import { createFraming } from "../../src/framing/index.js";
import { heldMemory } from "./heldMemory.js";

const framing = process.argv[2] === "content-length" ? "content-length" : "ndjson";
const SIZE = Number(process.argv[3] ?? 12_000_000);

const held = heldMemory;

const main = async () => {
  // One message whose text is SIZE bytes: {"jsonrpc":"2.0","method":"probe","params":{"pad":"xxx…"}}
  const head = '{"jsonrpc":"2.0","method":"probe","params":{"pad":"';
  const tail = '"}}';
  // Built as bytes, with no SIZE-long string alive to be collected mid-measurement.
  const body = new Uint8Array(SIZE).fill(0x78);
  body.set(new TextEncoder().encode(head), 0);
  body.set(new TextEncoder().encode(tail), SIZE - tail.length);
  const header = framing === "content-length" ? new TextEncoder().encode(`Content-Length: ${body.length}\r\n\r\n`) : new Uint8Array(0);
  const last = framing === "content-length" ? body.subarray(body.length - 1) : new Uint8Array([0x0a]);
  const pending = framing === "content-length" ? body.subarray(0, body.length - 1) : body;

  let listener: ((chunk: Uint8Array) => void) | undefined;
  const channel: ByteChannel = {
    onData: (l) => ((listener = l), () => (listener = undefined)),
    onEnd: () => () => {},
    onError: () => () => {},
    write: () => {},
    end: () => {},
  };
  const { reader, writer } = createFraming(channel, framing);
  const client = new MspClient(reader, writer);
  let delivered = -1;
  client.onNotification((n) => (delivered = String(n.params?.["pad"]).length));
  const feed = listener as (chunk: Uint8Array) => void;

  const before = await held();
  if (header.length > 0) feed(header);
  // One byte per chunk, each chunk a new object (a view of the source, as a stream would hand out).
  for (let i = 0; i < pending.length; i++) feed(pending.subarray(i, i + 1));
  const during = await held();
  feed(last);
  await new Promise((resolve) => setImmediate(resolve));
  await client.close();
  console.log(
    JSON.stringify({
      framing,
      pendingBytes: pending.length,
      heapGrowthBytes: during.total - before.total,
      heapUsedMB: during.heap / 1e6,
      arrayBuffersMB: during.arrayBuffers / 1e6,
      rssMB: during.rss / 1e6,
      delivered: delivered === SIZE - head.length - tail.length,
    }),
  );
};
void main();
