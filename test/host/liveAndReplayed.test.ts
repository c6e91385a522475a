/**
 * Invariant C of MSP 2.0: a client that resumes a session after any cursor ends with the same
 * items, byte for byte, as a client that watched the stream live. Property-tested over random
 * texts (surrogate pairs included, so chunks split them), random chunkings, random resume points,
 * and random drops: a client whose connection is cut mid-stream, replaced by a fresh client that
 * resumes from the last cursor the dropped one saw while the turn is still streaming.
 *
 * The host is the reference host's core (createHost, in this process); each client is the SDK's
 * MspClient over an NDJSON byte channel, so the SDK's ledger does the folding.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { connect, type MspClient } from "../../src/index.js";
import { createHost, type MuseHost } from "../../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { createLinkedPair } from "../../src/testing/linkedPair.js";

const dir = mkdtempSync(join(tmpdir(), "muse-live-replayed-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An SDK client attached to `host` over an in-process NDJSON channel; `drop()` cuts it like a lost socket. */
function attach(host: MuseHost): { client: MspClient; drop(): void } {
  const [clientSide, hostSide] = createLinkedPair();
  const encoder = new TextEncoder();
  let onMessage: (text: string) => void = () => {};
  const closeHandlers: Array<() => void> = [];
  let open = true;
  const lines = new LineSplitter((line) => onMessage(line));
  hostSide.onData((chunk) => lines.push(chunk));
  hostSide.onEnd(() => {
    open = false;
    for (const handler of closeHandlers) handler();
  });
  const transport: MessageTransport = {
    onMessage: (callback) => (onMessage = callback),
    onClose: (callback) => closeHandlers.push(callback),
    send: (message) => {
      if (open) void hostSide.write(encoder.encode(`${JSON.stringify(message)}\n`));
    },
    close: () => {
      open = false;
    },
  };
  host.connect(transport);
  const client = connect(clientSide, { defaultTimeoutMs: 20_000 });
  return {
    client,
    drop: () => {
      host.disconnect(transport);
      clientSide.destroy({ reason: "dropped" });
    },
  };
}

/** The items of `turnId` as `client` holds them, as JSON text: what "byte for byte" compares. */
const itemsJson = (client: MspClient, turnId: string) => JSON.stringify(client.items.itemsOf(turnId));

/** The cursor number of each item's `item/completed`, from a client's notifications. */
function completionCursors(client: MspClient): Map<string, number> {
  const at = new Map<string, number>();
  client.events.on("item/completed", ({ item, viewCursor }) => at.set(item.itemId, Number(viewCursor.split(":").pop())));
  return at;
}

/**
 * What a client that resumes after cursor `k` and kept nothing holds once the replay is read: the
 * live items still in progress at `k` (the resume answer's `items`, then their deltas) and those
 * started after it, each byte for byte as the live client holds it. Items finished by `k` are the
 * ones a client that kept its items already has.
 */
function liveItemsAfter(live: MspClient, turnId: string, completedAt: Map<string, number>, k: number): string {
  return JSON.stringify(live.items.itemsOf(turnId).filter((item) => (completedAt.get(item.itemId) ?? Infinity) > k));
}

/** Text with ASCII, accents, and astral characters (two UTF-16 code units each, so a chunk may split one). */
const textArb = fc
  .array(fc.constantFrom("a", "b", " ", "é", "\n", "\u{1F600}", "\u{1D11E}", "—", '"', "\\"), { minLength: 1, maxLength: 400 })
  .map((parts) => parts.join(""));

interface Case {
  reasoning: string;
  text: string;
  chunkSize: number;
  /** Where the resuming client starts: a fraction of the session's last cursor. */
  resumeAt: number;
  /** After how many item notifications the dropped client is cut. */
  dropAfter: number;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  reasoning: textArb,
  text: textArb,
  chunkSize: fc.integer({ min: 1, max: 24 }),
  resumeAt: fc.double({ min: 0, max: 1, noNaN: true }),
  dropAfter: fc.integer({ min: 1, max: 60 }),
});

let runs = 0;
/** Resumes whose answer carried items in progress: the property must have exercised that path. */
let resumedMidItem = 0;

async function check(c: Case): Promise<void> {
  const n = ++runs;
  const script = join(dir, `model-${n}.json`);
  // A slow first step, so the drop happens while the turn streams; the second step streams at once.
  writeFileSync(
    script,
    JSON.stringify({
      turns: [
        {
          steps: [
            { reasoning: c.reasoning, text: c.text, chunkSize: c.chunkSize, chunkDelayMs: 1 },
            { text: `${c.text}!`, chunkSize: c.chunkSize + 3 },
          ],
        },
      ],
    }),
  );
  const host = createHost({ models: new Map([["m", loadScriptedModel(script, "m")]]), defaultModel: "m", dataDir: join(dir, `data-${n}`) });
  try {
    const live = attach(host);
    const completedAt = completionCursors(live.client);
    const { sessionId } = await live.client.command("session/create", {});
    // The client to be dropped hears the session from the start, then loses its connection mid-stream.
    const doomed = attach(host);
    await doomed.client.command("session/resume", { sessionId });
    let heard = 0;
    const cut = new Promise<string | undefined>((resolve) => {
      doomed.client.onNotification(() => {
        if (++heard !== c.dropAfter) return;
        const cursor = doomed.client.lastViewCursor(sessionId);
        doomed.drop();
        resolve(cursor);
      });
    });
    const turn = live.client.startTurn({ sessionId, input: [{ type: "text", text: "go" }] });
    const { turnId } = await turn.accepted;
    // Replace the dropped client as soon as it is cut (while the turn may still stream).
    const lastSeen = await Promise.race([cut, turn.completed.then(() => "unseen" as const)]);
    const replacement = attach(host);
    const afterCursor = lastSeen === "unseen" || lastSeen === undefined ? undefined : lastSeen;
    const replaced = await replacement.client.command("session/resume", afterCursor === undefined ? { sessionId } : { sessionId, afterCursor });
    if ((replaced.items ?? []).length > 0) resumedMidItem += 1;
    await turn.completed;
    await replacement.client.turns.terminalOf(turnId, { timeoutMs: 20_000 });
    const watched = itemsJson(live.client, turnId);
    expect(JSON.parse(watched).map((i: { text?: string }) => i.text)).toEqual([c.reasoning, c.text, `${c.text}!`]);
    const cutAt = afterCursor === undefined ? 0 : Number(afterCursor.split(":").pop());
    expect(itemsJson(replacement.client, turnId)).toBe(liveItemsAfter(live.client, turnId, completedAt, cutAt));

    // A reload at a random point of the finished session: a fresh client resumes after that cursor.
    const last = Number(live.client.lastViewCursor(sessionId)?.split(":").pop());
    const at = Math.floor(c.resumeAt * last);
    const reloaded = attach(host);
    const resume = await reloaded.client.command("session/resume", at === 0 ? { sessionId } : { sessionId, afterCursor: `v:${sessionId}:${at}` });
    await reloaded.client.turns.terminalOf(turnId, { timeoutMs: 20_000 });
    expect(itemsJson(reloaded.client, turnId)).toBe(liveItemsAfter(live.client, turnId, completedAt, at));
    expect(resume.replayed).toBe(last - at);
    if ((resume.items ?? []).length > 0) resumedMidItem += 1;
    for (const a of [live, doomed, replacement, reloaded]) await a.client.close();
  } finally {
    await host.shutdown();
  }
}

describe("live and replayed items (MSP 2.0, invariant C)", () => {
  it("a client that resumes after any cursor, or replaces a dropped one mid-stream, ends with the live client's items, byte for byte", async () => {
    await fc.assert(fc.asyncProperty(caseArb, check), { numRuns: 25, seed: 19, endOnFailure: true });
    expect(resumedMidItem).toBeGreaterThan(5); // most runs cut or reload while an item streams
  }, 240_000);
});
