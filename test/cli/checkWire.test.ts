/** The check's wire tap: it records both directions in order, in either stdio framing, and its raw sends are recorded too. */
import { describe, expect, it } from "vitest";
import { connect, MspClient, PROTOCOL_VERSION } from "../../src/index.js";
import { createFraming } from "../../src/framing/index.js";
import { createLinkedPair } from "../../src/testing/index.js";
import { WireTap } from "../../packages/host/src/cli/check/checkWire.js";
import type { WebSocketConstructor } from "../../src/websocket/index.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function frame(text: string): string {
  return `Content-Length: ${encoder.encode(text).length}\r\n\r\n${text}`;
}

describe("WireTap", () => {
  it("records a Content-Length wire split across chunks, and frames raw sends", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const tap = new WireTap();
    const received: string[] = [];
    hostSide.onData((chunk) => received.push(decoder.decode(chunk)));
    const { reader, writer } = createFraming(tap.wrapChannel(clientSide, "content-length"), "content-length");
    const client = new MspClient(reader, writer);
    const info = client.command("host/info", {}, { timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const request = JSON.parse(received.join("").split("\r\n\r\n")[1] as string) as { id: number; params: { commandId: string } };
    const answer = frame(
      JSON.stringify({
        jsonrpc: "2.0",
        id: request.id,
        result: { commandId: request.params.commandId, status: "accepted", protocolVersion: PROTOCOL_VERSION, name: "hé" },
      }),
    );
    const bytes = encoder.encode(answer + frame('{"jsonrpc":"2.0","method":"x/y","params":{}}'));
    // Cut inside the first header, inside the first body, and inside the second body.
    const cuts = [0, 7, 30, bytes.length - 3, bytes.length];
    for (let i = 0; i + 1 < cuts.length; i++) void hostSide.write(bytes.subarray(cuts[i], cuts[i + 1]));
    expect((await info)["name"]).toBe("hé");
    const waited = await tap.waitFor((m) => m["method"] === "x/y");
    expect(waited.line).toBe(3);
    tap.sendRaw("not json");
    await tick();
    expect(received.join("")).toContain(frame("not json"));
    expect(tap.lines.map((l) => [l.line, l.dir, l.message === undefined ? l.raw : (l.message["method"] ?? "response")])).toEqual([
      [1, "client", "host/info"],
      [2, "server", "response"],
      [3, "server", "x/y"],
      [4, "client", "not json"],
    ]);
    await client.close();
  });

  it("records NDJSON through recordingChannel, raw lines included, and rejects waits once closed", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const tap = new WireTap();
    expect(tap.attached).toBe(false);
    const client = connect(tap.wrapChannel(clientSide));
    expect(tap.attached).toBe(true);
    const received: string[] = [];
    hostSide.onData((chunk) => received.push(decoder.decode(chunk)));
    tap.sendRaw("[]");
    await tick();
    expect(received.join("")).toBe("[]\n");
    const pending = tap.waitFor((m) => m["method"] === "never");
    tap.close(new Error("the scenario is over"));
    await expect(pending).rejects.toThrow("the scenario is over");
    await expect(tap.waitFor(() => true)).rejects.toThrow("the scenario is over");
    expect(tap.lines).toEqual([{ line: 1, dir: "client", raw: "[]", message: undefined }]);
    expect(tap.transcript()).toEqual([]); // not a JSON-RPC object: not for checkTranscript
    await client.close();
  });

  it("stops recording the host's side at a frame it cannot follow, says where, and fails the waits saying why", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const tap = new WireTap();
    const framed = createFraming(tap.wrapChannel(clientSide, "content-length"), "content-length");
    const client = new MspClient(framed.reader, framed.writer);
    const pending = tap.waitFor((m) => m["method"] === "never");
    void hostSide.write(encoder.encode(`${frame('{"jsonrpc":"2.0","method":"x/y","params":{}}')}no header here\r\n\r\n{}`));
    await expect(pending).rejects.toThrow("the host's messages after line 1 were not recorded: malformed header line");
    expect(tap.stops).toEqual(["the host's messages after line 1 were not recorded: malformed header line"]);
    expect(tap.lines.map((l) => l.raw)).toEqual(['{"jsonrpc":"2.0","method":"x/y","params":{}}']);
    await client.close();
  });

  it("records WebSocket frames through the recording class, and sends raw frames through it", () => {
    const sent: string[] = [];
    class Socket extends EventTarget {
      readyState = 1;
      protocol = "msp.v1";
      bufferedAmount = 0;
      binaryType = "blob";
      send(data: string) {
        sent.push(data);
      }
      close() {}
    }
    const tap = new WireTap();
    const Recording = tap.webSocket(Socket as unknown as WebSocketConstructor);
    const socket = new Recording("ws://127.0.0.1:1/msp") as unknown as Socket;
    expect(tap.attached).toBe(true);
    socket.dispatchEvent(new MessageEvent("message", { data: '{"jsonrpc":"2.0","method":"x/y","params":{}}' }));
    tap.sendRaw("this is not JSON");
    expect(sent).toEqual(["this is not JSON"]);
    expect(tap.lines.map((l) => [l.line, l.dir, l.raw])).toEqual([
      [1, "server", '{"jsonrpc":"2.0","method":"x/y","params":{}}'],
      [2, "client", "this is not JSON"],
    ]);
  });

  it("stops recording past its bounds, and fails every wait saying so", async () => {
    const tap = new WireTap({ maxLines: 3 });
    const pending = tap.waitFor((m) => m["method"] === "never");
    for (let i = 0; i < 5; i++) tap.record("server", `{"jsonrpc":"2.0","method":"n/${i}","params":{}}`);
    expect(tap.lines).toHaveLength(3);
    expect(tap.overflow).toMatch(/^the wire passed the check's bound of 3 messages or \d+ characters in one scenario/);
    await expect(pending).rejects.toThrow(/passed the check's bound/);
    const chars = new WireTap({ maxChars: 10 });
    chars.record("client", "x".repeat(11));
    expect(chars.lines).toEqual([]);
    expect(chars.overflow).toBeDefined();
  });
});
