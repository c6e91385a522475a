/**
 * checkTranscript's invariant S and the steering exemption from the cut-off-text rule, on
 * mutations of a committed recording (`transcripts/steer-a-running-turn.jsonl`): turn 1 is steered
 * and completes (its steer consumed, lines 13–29); turn 2 is steered and cancelled by a default
 * `turn/cancel` (line 45), its splice (line 46) discarding the steer.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkTranscript } from "../../src/testing/index.js";

type Message = Record<string, unknown> & { params?: Record<string, unknown> };
type Line = { dir: "client" | "server"; msg: Message };

const recording = (): Line[] =>
  readFileSync("transcripts/steer-a-running-turn.jsonl", "utf8")
    .trim()
    .split("\n")
    .map((text) => {
      const { dir, raw } = JSON.parse(text) as { dir: "client" | "server"; raw: string };
      return { dir, msg: JSON.parse(raw) as Message };
    });

/** The transcript of `lines`, each notification's viewCursor renumbered 1, 2, … per session (lines may have been added). */
function transcript(lines: Line[]): string {
  const counts = new Map<string, number>();
  return lines
    .map(({ dir, msg }) => {
      const params = msg.params;
      if (dir === "server" && params !== undefined && typeof params["viewCursor"] === "string") {
        const sessionId = String(params["sessionId"]);
        const n = (counts.get(sessionId) ?? 0) + 1;
        counts.set(sessionId, n);
        params["viewCursor"] = `v:${sessionId}:${n}`;
      }
      return JSON.stringify({ dir, raw: JSON.stringify(msg) });
    })
    .join("\n");
}

const itemOf = (line: Line) => line.msg.params?.["item"] as Record<string, unknown>;
const at = (lines: Line[], n: number) => lines[n - 1] as Line;

describe("invariant S on mutations of steer-a-running-turn.jsonl", () => {
  it("the recording itself keeps it", () => {
    expect(checkTranscript(transcript(recording())).problems).toEqual([]);
  });

  it("a steering item that completes failed for another reason than a restart is a problem", () => {
    const lines = recording();
    Object.assign(itemOf(at(lines, 16)), { status: "failed", failureReason: "model error" });
    expect(checkTranscript(transcript(lines)).problems).toEqual([
      expect.stringMatching(/^line 16: steering item of \S+ completes "failed" with failureReason "model error": .* "host restarted" \(invariant S\)$/),
    ]);
    // "host restarted" is the one failure a steering item may end with.
    itemOf(at(lines, 16))["failureReason"] = "host restarted";
    expect(checkTranscript(transcript(lines)).problems).toEqual([]);
  });

  it("a splice of a turn nobody cancelled is a problem, unless its terminal's cause explains it (disposed; user: a Stop from another connection)", () => {
    const lines = recording();
    const turnId = at(lines, 29).msg.params?.["turnId"];
    const sessionId = at(lines, 29).msg.params?.["sessionId"];
    const splice: Line = {
      dir: "server",
      msg: { jsonrpc: "2.0", method: "inbox/cancelled", params: { sessionId, viewCursor: "", turnId, discarded: { steerIds: [], turnIds: [] } } },
    };
    lines.splice(28, 0, splice);
    expect(checkTranscript(transcript(lines)).problems).toEqual([
      expect.stringMatching(
        /^line 30: inbox\/cancelled at line 29 for turn \S+, which no default turn\/cancel or denyAndStop of this connection asked for, and the turn ends with cause.kind missing: .* \(invariant S\)$/,
      ),
    ]);
    // A policy stop keeps the inbox: its splice is a problem too.
    Object.assign(at(lines, 30).msg.params as object, {
      terminal: "cancelled",
      reason: "cancelled during model stream",
      cause: { kind: "hook", reason: "turn time limit (1000 ms)" },
    });
    ((at(lines, 32).msg["error"] as { data: Record<string, unknown> }).data as Record<string, unknown>)["terminal"] = "cancelled"; // the later steer's rejection names it
    expect(checkTranscript(transcript(lines)).problems).toEqual([
      expect.stringMatching(/^line 30: .*cause.kind "hook": .*a policy stop keeps it \(invariant S\)$/),
    ]);
    // A user's Stop sent on another connection (seen here live, or replayed by a resume) explains it.
    Object.assign(at(lines, 30).msg.params as object, { reason: "cancelled during model stream", cause: { kind: "user" } });
    expect(checkTranscript(transcript(lines)).problems).toEqual([]);
    Object.assign(at(lines, 30).msg.params as object, { terminal: "cancelled", reason: "host shutting down", cause: { kind: "disposed" } });
    expect(checkTranscript(transcript(lines)).problems).toEqual([]);
  });

  it("a queued turn a default cancel discards is listed in the splice's turnIds", () => {
    const lines = recording();
    const sessionId = at(lines, 32).msg.params?.["sessionId"];
    const queued = "01a233fc-d9d0-7000-8000-00000000f001";
    // Queued while turn 2 runs (before the cancel), discarded by it: its terminal right after the splice's steering item.
    lines.splice(
      44,
      0,
      {
        dir: "client",
        msg: { jsonrpc: "2.0", id: 20, method: "turn/start", params: { sessionId, input: [{ type: "text", text: "later" }], commandId: queued } },
      },
      {
        dir: "server",
        msg: { jsonrpc: "2.0", id: 20, result: { commandId: queued, status: "accepted", turnId: queued, startedNewTurn: true, disposition: "queued" } },
      },
    );
    const terminal: Line = {
      dir: "server",
      msg: {
        jsonrpc: "2.0",
        method: "turn/completed",
        params: { sessionId, viewCursor: "", turnId: queued, terminal: "cancelled", reason: "discarded from inbox", cause: { kind: "user" }, durationMs: 0 },
      },
    };
    lines.splice(49, 0, terminal); // after the steering item's item/completed (line 49 now)
    expect(checkTranscript(transcript(lines)).problems).toEqual([
      expect.stringMatching(
        /^line 50: queued turn \S+ is discarded \(cancelled\) while turn \S+'s inbox\/cancelled is out, but no splice of it lists the turn: .* \(invariant S\)$/,
      ),
    ]);
    ((at(lines, 48).msg.params?.["discarded"] as { turnIds: string[] }).turnIds as string[]).push(queued);
    expect(checkTranscript(transcript(lines)).problems).toEqual([]);
  });

  it("a splice lists only its own turn's steering, not a steer discarded in another turn", () => {
    const lines = recording();
    const first = itemOf(at(lines, 16));
    // Turn 1's steer completes cancelled (discarded, unlisted: reported at line 16), and turn 2's splice lists it.
    Object.assign(first, { status: "cancelled", failureReason: "discarded from inbox" });
    (at(lines, 46).msg.params?.["discarded"] as { steerIds: string[] }).steerIds.push(String(first["steerId"]));
    const { problems } = checkTranscript(transcript(lines));
    expect(problems).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^line 50: inbox/cancelled at line 46 lists steer ${String(first["steerId"])}, but no steering item of this turn with that steerId completed "cancelled"`,
        ),
      ),
    );
  });
});

describe("the cut-off-text rule and steering messages", () => {
  it('exempts only the user\'s steering message: a message with a steerId but no author: "user" is cut-off text', () => {
    const lines = recording();
    delete itemOf(at(lines, 44))["author"];
    delete itemOf(at(lines, 47))["author"];
    expect(checkTranscript(transcript(lines)).problems).toEqual([
      expect.stringMatching(
        /^line 47: item\/completed of message \S+ is "cancelled" without interrupted: true: a text cut by a Stop must say so \(cut-off text\)$/,
      ),
    ]);
  });

  it("reports a user's steering message that says interrupted: true", () => {
    const lines = recording();
    itemOf(at(lines, 47))["interrupted"] = true;
    expect(checkTranscript(transcript(lines)).problems).toEqual([
      expect.stringMatching(
        /^line 47: item\/completed of steering message \S+ says interrupted: true: steering input is never cut, it ends whole \(invariant S\)$/,
      ),
    ]);
  });
});
