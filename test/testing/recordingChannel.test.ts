/** recordingChannel: both directions in wire order, in either stdio framing, cut where the client's reader cuts. */
import { describe, expect, it } from "vitest";
import { MspClient, PROTOCOL_VERSION } from "../../src/index.js";
import { createFraming } from "../../src/framing/index.js";
import { createLinkedPair, recordingChannel, type TranscriptEntry } from "../../src/testing/index.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

function frame(text: string): string {
  return `Content-Length: ${encoder.encode(text).length}\r\n\r\n${text}`;
}

/** Feed `text` to the host side in the chunks `cuts` (byte offsets) make. */
function writeInCuts(write: (bytes: Uint8Array) => void, text: string, cuts: number[]): void {
  const bytes = encoder.encode(text);
  const at = [0, ...cuts, bytes.length];
  for (let i = 0; i + 1 < at.length; i++) write(bytes.subarray(at[i], at[i + 1]));
}

describe("recordingChannel", () => {
  it("records a Content-Length wire split inside headers, bodies and characters, and passes the bytes on unchanged", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const entries: TranscriptEntry[] = [];
    const sent: string[] = [];
    hostSide.onData((chunk) => sent.push(decoder.decode(chunk)));
    const { reader, writer } = createFraming(
      recordingChannel(clientSide, (e) => entries.push(e), { framing: "content-length" }),
      "content-length",
    );
    const client = new MspClient(reader, writer);
    const info = client.command("host/info", {}, { timeoutMs: 5_000 });
    await settle();
    const request = JSON.parse(sent.join("").split("\r\n\r\n")[1] as string) as { id: number; params: { commandId: string } };
    const answer = JSON.stringify({
      jsonrpc: "2.0",
      id: request.id,
      result: { commandId: request.params.commandId, status: "accepted", protocolVersion: PROTOCOL_VERSION, name: "hé ✓" },
    });
    const note = '{"jsonrpc":"2.0","method":"x/y","params":{}}';
    const wire = frame(answer) + frame(note);
    const bodyAt = wire.indexOf("{");
    // Inside the first header, inside the first body, inside "é" (a 2-byte character), inside the second body.
    const e = encoder.encode(wire.slice(0, wire.indexOf("é"))).length + 1;
    writeInCuts((bytes) => void hostSide.write(bytes), wire, [7, bodyAt + 5, e, encoder.encode(wire).length - 3]);
    expect((await info)["name"]).toBe("hé ✓");
    await settle();
    expect(entries).toEqual([
      { dir: "client", raw: sent.join("").split("\r\n\r\n")[1] },
      { dir: "server", raw: answer },
      { dir: "server", raw: note },
    ]);
    await client.close();
  });

  it("records NDJSON text as it crossed, JSON or not, without line endings or blank lines", () => {
    const [clientSide] = createLinkedPair();
    const entries: TranscriptEntry[] = [];
    const recorded = recordingChannel(clientSide, (e) => entries.push(e));
    void recorded.write(encoder.encode("not json\n[]\r\n\n"));
    expect(entries).toEqual([
      { dir: "client", raw: "not json" },
      { dir: "client", raw: "[]" },
    ]);
  });

  it("stops recording the host's side at a Content-Length header the framing cannot read, and says so once", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const entries: TranscriptEntry[] = [];
    const stops: Array<[string, string]> = [];
    const recorded = recordingChannel(clientSide, (e) => entries.push(e), { framing: "content-length", onStop: (dir, reason) => stops.push([dir, reason]) });
    const chunks: string[] = [];
    recorded.onData((chunk) => chunks.push(decoder.decode(chunk)));
    const wire = `${frame("{}")}Bogus\r\n\r\n${frame("[]")}`;
    void hostSide.write(encoder.encode(wire));
    await settle();
    expect(entries).toEqual([{ dir: "server", raw: "{}" }]);
    expect(stops).toEqual([["server", "malformed header line"]]);
    expect(chunks.join("")).toBe(wire); // the client still gets every byte: its own reader decides
  });

  it("does not record a host message over maxMessageBytes, nor anything after it, as the client's reader would not read it", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const entries: TranscriptEntry[] = [];
    const stops: string[] = [];
    const recorded = recordingChannel(clientSide, (e) => entries.push(e), { maxMessageBytes: 16, onStop: (_dir, reason) => stops.push(reason) });
    recorded.onData(() => {});
    void hostSide.write(encoder.encode(`{"a":1}\n${"x".repeat(40)}\n{"b":2}\n`));
    await settle();
    expect(entries).toEqual([{ dir: "server", raw: '{"a":1}' }]);
    expect(stops).toEqual(["a message exceeds maxMessageBytes (16 bytes)"]);
  });

  it("throws a TypeError on an unknown framing", () => {
    const [clientSide] = createLinkedPair();
    expect(() => recordingChannel(clientSide, () => {}, { framing: "xml" as "ndjson" })).toThrow(TypeError);
  });
});
