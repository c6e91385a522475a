/**
 * WebSocketMessageWriter against a fake socket whose `bufferedAmount` the test sets: the exact
 * bounds, which a real socket shows only approximately (see connectWebSocket.test.ts for real ones).
 */
import type { Message } from "vscode-jsonrpc";
import { describe, expect, it, vi } from "vitest";
import { MessageEncodingError } from "../../src/framing/framedWriter.js";
import type { WebSocketLike } from "../../src/websocket/webSocketLike.js";
import { WebSocketMessageWriter } from "../../src/websocket/webSocketMessageWriter.js";

function fakeSocket() {
  const sent: string[] = [];
  const closes: Array<[number | undefined, string | undefined]> = [];
  const socket = {
    readyState: 1,
    protocol: "msp.v1",
    bufferedAmount: 0,
    binaryType: "arraybuffer",
    send: (data: string) => void sent.push(data),
    close(code?: number, reason?: string) {
      closes.push([code, reason]);
      this.readyState = 2;
    },
    addEventListener() {},
    removeEventListener() {},
  };
  return { socket: socket as typeof socket & WebSocketLike, sent, closes };
}

const message = (id: number, text = ""): Message => ({ jsonrpc: "2.0", id, method: "x", params: { text } }) as Message;

describe("WebSocketMessageWriter", () => {
  it("sends at once under the bound; over it, messages wait in order and go when the buffer drains", async () => {
    vi.useFakeTimers();
    try {
      const { socket, sent } = fakeSocket();
      const writer = new WebSocketMessageWriter(socket, { maxBufferedBytes: 100, maxWriteBufferBytes: 10_000 });
      await writer.write(message(1));
      expect(sent).toHaveLength(1);
      socket.bufferedAmount = 101;
      const waiting = [writer.write(message(2)), writer.write(message(3))];
      await vi.advanceTimersByTimeAsync(1_000);
      expect(sent).toHaveLength(1);
      socket.bufferedAmount = 100;
      await vi.advanceTimersByTimeAsync(10);
      await Promise.all(waiting);
      expect(sent.map((text) => (JSON.parse(text) as { id: number }).id)).toEqual([1, 2, 3]);
      writer.dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a message that would pass maxWriteBufferBytes while others wait closes the socket with 4008 and fires onError; waiting writes reject", async () => {
    const { socket, closes } = fakeSocket();
    const writer = new WebSocketMessageWriter(socket, { maxBufferedBytes: 100, maxWriteBufferBytes: 1_000 });
    const errors: string[] = [];
    writer.onError(([error]) => errors.push(error.message));
    socket.bufferedAmount = 500;
    // One message larger than the bound still waits its turn when nothing else does…
    const first = writer.write(message(1, "x".repeat(2_000)));
    // …a second one, with that one waiting, passes it.
    await expect(writer.write(message(2))).rejects.toThrow(/^the host is not reading its input: \d+ bytes queued \(maxWriteBufferBytes 1000\)$/);
    expect(closes).toEqual([[4008, "send queue full"]]);
    expect(errors).toHaveLength(1);
    writer.end(); // the connection ends the writer as it closes: what waits is rejected, nothing leaks
    await expect(first).rejects.toThrow("the connection is closed");
    expect(closes).toHaveLength(1); // already closing: end() does not close again
  });

  it("a message that cannot be encoded rejects with MessageEncodingError and leaves the socket alone", async () => {
    const { socket, sent, closes } = fakeSocket();
    const writer = new WebSocketMessageWriter(socket, { maxBufferedBytes: 100, maxWriteBufferBytes: 1_000 });
    await expect(writer.write({ jsonrpc: "2.0", id: 1, method: "x", params: { n: 1n } } as unknown as Message)).rejects.toBeInstanceOf(MessageEncodingError);
    expect(sent).toEqual([]);
    expect(closes).toEqual([]);
  });

  it("end() closes an open socket with 1000; a socket already closing drops frames without an error (its close event tells why)", async () => {
    const { socket, sent, closes } = fakeSocket();
    const writer = new WebSocketMessageWriter(socket, { maxBufferedBytes: 100, maxWriteBufferBytes: 1_000 });
    socket.readyState = 2;
    await writer.write(message(1));
    expect(sent).toEqual([]);
    socket.readyState = 1;
    writer.end();
    expect(closes).toEqual([[1000, undefined]]);
    await expect(writer.write(message(2))).rejects.toThrow("the connection is closed");
  });
});
