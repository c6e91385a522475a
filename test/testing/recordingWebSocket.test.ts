/** recordingWebSocket: every text frame, both ways, recorded before the client's own listeners see it. */
import { describe, expect, it } from "vitest";
import { recordingWebSocket, type TranscriptEntry } from "../../src/testing/index.js";
import type { WebSocketConstructor, WebSocketLike } from "../../src/websocket/index.js";

/** A socket that is open at once; `receive` plays a frame from the host. */
class FakeSocket extends EventTarget {
  static last: FakeSocket | undefined;
  readonly sent: string[] = [];
  readyState = 1;
  protocol = "msp.v1";
  bufferedAmount = 0;
  binaryType = "blob";
  constructor(
    readonly url: string,
    readonly protocols?: string | string[],
  ) {
    super();
    FakeSocket.last = this;
  }
  send(data: string): void {
    if (data === "refuse") throw new Error("InvalidStateError");
    this.sent.push(data);
  }
  close(): void {
    this.readyState = 3;
  }
  receive(data: unknown): void {
    this.dispatchEvent(new MessageEvent("message", { data }));
  }
}

describe("recordingWebSocket", () => {
  it("records sent and received text frames in order, host frames before any other listener, binary frames not at all", () => {
    const entries: TranscriptEntry[] = [];
    const Recording = recordingWebSocket(FakeSocket as unknown as WebSocketConstructor, (entry) => entries.push(entry));
    const socket: WebSocketLike = new Recording("ws://127.0.0.1:1/msp", ["msp.v1"]);
    const fake = FakeSocket.last as FakeSocket;
    expect(socket).toBeInstanceOf(FakeSocket);
    expect([fake.url, fake.protocols]).toEqual(["ws://127.0.0.1:1/msp", ["msp.v1"]]);
    const heard: number[] = [];
    socket.addEventListener("message", () => heard.push(entries.length));
    socket.send('{"jsonrpc":"2.0","id":1,"method":"host/info","params":{}}');
    fake.receive('{"jsonrpc":"2.0","id":1,"result":{}}');
    fake.receive(new Uint8Array([1, 2]).buffer);
    expect(() => socket.send("refuse")).toThrow("InvalidStateError");
    expect(entries).toEqual([
      { dir: "client", raw: '{"jsonrpc":"2.0","id":1,"method":"host/info","params":{}}' },
      { dir: "server", raw: '{"jsonrpc":"2.0","id":1,"result":{}}' },
    ]);
    expect(heard).toEqual([2, 2]); // the host's frame was already recorded when the client heard it
    expect(fake.sent).toHaveLength(1); // a send that threw sent nothing, and was not recorded
  });
});
