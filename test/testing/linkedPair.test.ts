import { describe, expect, it } from "vitest";
import { connect, PROTOCOL_VERSION } from "../../src/index.js";
import { createLinkedPair, formatTranscriptEntry, parseTranscript, recordingChannel, type TranscriptEntry } from "../../src/testing/index.js";

describe("createLinkedPair", () => {
  it("delivers bytes in order, asynchronously, and end/destroy reach the peer", async () => {
    const [a, b] = createLinkedPair();
    const got: number[] = [];
    let ended: unknown = "no";
    b.onData((c) => got.push(...c));
    b.onEnd((d) => (ended = d));
    a.write(Uint8Array.of(1, 2));
    a.write(Uint8Array.of(3));
    expect(got).toEqual([]);
    await Promise.resolve();
    await Promise.resolve();
    expect(got).toEqual([1, 2, 3]);
    a.write(Uint8Array.of(9));
    a.destroy({ reason: "crash" });
    await new Promise((r) => setTimeout(r, 0));
    expect(got).toEqual([1, 2, 3, 9]); // written before the crash: still delivered, before the end
    expect(ended).toEqual({ reason: "crash" });
    expect(() => b.write(Uint8Array.of(4))).toThrow(/EPIPE/);
  });
});

describe("recordingChannel + transcripts", () => {
  it("records both directions in wire order, as parseable transcript lines", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const entries: TranscriptEntry[] = [];
    const client = connect(recordingChannel(clientSide, (e) => entries.push(e)));
    const enc = new TextEncoder();
    hostSide.onData((chunk) => {
      const msg = JSON.parse(new TextDecoder().decode(chunk)) as { id: number; params: { commandId: string } };
      hostSide.write(
        enc.encode(
          `${JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { commandId: msg.params.commandId, status: "accepted", protocolVersion: PROTOCOL_VERSION } })}\n`,
        ),
      );
    });
    await client.command("host/info", {});
    await client.close();
    expect(entries.map((e) => e.dir)).toEqual(["client", "server"]);
    const parsed = parseTranscript(entries.map(formatTranscriptEntry));
    expect(parsed[0]?.message["method"]).toBe("host/info");
    expect(parsed[1]?.line).toBe(2);
  });

  it("rejects a malformed transcript line with its line number", () => {
    expect(() => parseTranscript(['{"dir":"client","raw":"{}"}', '{"dir":"sideways","raw":"{}"}'])).toThrow(/line 2/);
    expect(() => parseTranscript(['{"dir":"client","raw":"{nope"}'])).toThrow(/line 1: raw is not JSON/);
  });
});
