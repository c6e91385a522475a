/** Tests of FramedMessageWriter's backpressure: one message at a time to a full channel, a bounded queue, end and dispose. */
import { describe, expect, it } from "vitest";
import type { Message } from "vscode-jsonrpc";
import { NdjsonMessageWriter, WriteBufferFullError, type ByteChannel } from "../../src/framing/index.js";

/** A channel that is full after every write until `room()` is called. */
function slowChannel() {
  const written: string[] = [];
  const rooms: Array<() => void> = [];
  let ended = false;
  const channel: ByteChannel = {
    onData: () => () => {},
    onEnd: () => () => {},
    onError: () => () => {},
    write(bytes) {
      written.push(new TextDecoder().decode(bytes).trim());
      return new Promise<void>((resolve) => rooms.push(resolve));
    },
    end: () => (ended = true),
  };
  return { channel, written, room: () => rooms.shift()?.(), ended: () => ended };
}

const note = (n: number, pad = 0): Message => ({ jsonrpc: "2.0", method: "m", params: { n, pad: "p".repeat(pad) } }) as Message;
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("FramedMessageWriter backpressure", () => {
  it("hands a full channel the next message only once it has room, in call order", async () => {
    const { channel, written, room } = slowChannel();
    const writer = new NdjsonMessageWriter(channel);
    const done: number[] = [];
    const writes = [1, 2, 3].map((n) => writer.write(note(n)).then(() => done.push(n)));
    expect(written.map((w) => JSON.parse(w).params.n)).toEqual([1]);
    expect(writer.queuedBytes).toBeGreaterThan(0);
    room();
    await tick();
    expect(written).toHaveLength(2);
    room();
    await tick();
    room();
    await Promise.all(writes);
    expect(done).toEqual([1, 2, 3]);
    expect(writer.queuedBytes).toBe(0);
  });

  it("past maxWriteBufferBytes: a WriteBufferFullError, fired once, and everything queued is released and rejected", async () => {
    const { channel } = slowChannel();
    const writer = new NdjsonMessageWriter(channel, { maxWriteBufferBytes: 1_000 });
    const errors: unknown[] = [];
    writer.onError(([error]) => errors.push(error));
    const first = writer.write(note(1, 400)).catch((e: unknown) => e);
    const second = writer.write(note(2, 400)).catch((e: unknown) => e);
    const third = await writer.write(note(3, 400)).catch((e: unknown) => e);
    expect(third).toBeInstanceOf(WriteBufferFullError);
    expect((third as WriteBufferFullError).message).toMatch(/^the host is not reading its input: \d+ bytes queued/);
    expect([await first, await second]).toEqual([third, third]);
    expect(writer.queuedBytes).toBe(0);
    expect(await writer.write(note(4)).catch((e: unknown) => e)).toBe(third);
    expect(errors).toEqual([third]);
  });

  it("a single message larger than the bound is written when nothing waits", async () => {
    const written: Uint8Array[] = [];
    const writer = new NdjsonMessageWriter(
      { onData: () => () => {}, onEnd: () => () => {}, onError: () => () => {}, write: (b) => void written.push(b), end: () => {} },
      { maxWriteBufferBytes: 10 },
    );
    await writer.write(note(1, 100));
    await writer.write(note(2, 100));
    expect(written).toHaveLength(2);
  });

  it("end() waits for the queue; dispose() drops it, rejecting the waiting writes, and ends at once", async () => {
    const a = slowChannel();
    const writer = new NdjsonMessageWriter(a.channel);
    const w1 = writer.write(note(1));
    const w2 = writer.write(note(2));
    writer.end();
    expect(a.ended()).toBe(false);
    a.room();
    await w1;
    a.room();
    await w2;
    await tick();
    expect(a.ended()).toBe(true);

    const b = slowChannel();
    const disposed = new NdjsonMessageWriter(b.channel);
    const pending = [disposed.write(note(1)).catch((e: unknown) => e), disposed.write(note(2)).catch((e: unknown) => e)];
    disposed.end();
    disposed.dispose();
    expect(b.ended()).toBe(true);
    for (const e of await Promise.all(pending)) expect(String(e)).toMatch(/the writer was disposed/);
  });

  it("rejects a maxWriteBufferBytes that is not a positive number", () => {
    const { channel } = slowChannel();
    expect(() => new NdjsonMessageWriter(channel, { maxWriteBufferBytes: 0 })).toThrow(RangeError);
    expect(() => new NdjsonMessageWriter(channel, { maxWriteBufferBytes: Number.NaN })).toThrow(RangeError);
  });
});
