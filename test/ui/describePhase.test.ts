import { describe, expect, it } from "vitest";
import { HOST_RESTARTED_REASON, TurnReasons, type TurnCompletedParams } from "../../src/index.js";
import type { SessionTurn, SessionTurnPhase } from "../../src/session/index.js";
import { canStop, describePhase, describeTerminal, type TurnPhaseView } from "../../src/ui/index.js";

const NO_PROGRESS = { started: 0, ended: 0, running: 0 };

/** A whole SessionTurn, as a session's snapshot holds it. */
function turn(phase: SessionTurnPhase, extra: Partial<Omit<SessionTurn, "phase">> & { stopState?: TurnPhaseView["stopState"] } = {}): SessionTurn {
  return { turnId: "t", phase, items: [], droppedItems: 0, approvals: [], stopRequested: false, subagents: [], subagentProgress: NO_PROGRESS, ...extra };
}

function ended(terminal: TurnCompletedParams["terminal"], reason: string, cause?: TurnCompletedParams["cause"]): SessionTurn {
  const params: TurnCompletedParams = { sessionId: "s", viewCursor: "v:s:9", turnId: "t", terminal, reason, durationMs: 10 };
  if (cause !== undefined) params.cause = cause;
  return turn("ended", { terminal: params });
}

describe("describePhase", () => {
  it("takes a SessionTurn as it is (a SessionTurn is a TurnPhaseView)", () => {
    const view: TurnPhaseView = turn("running");
    expect(describePhase(view)).toBe("running");
  });

  it("names the phases before an ending, and says a reconnecting turn may still be running", () => {
    expect(describePhase(turn("starting"))).toBe("starting");
    expect(describePhase(turn("queued"))).toBe("queued");
    expect(describePhase(turn("running"))).toBe("running");
    expect(describePhase(turn("reconnecting"))).toBe("reconnecting: the turn may still be running");
  });

  it("says where a pressed Stop is: kept for when the session is back, sent, accepted by the host", () => {
    expect(describePhase(turn("stopping", { stopRequested: true, stopState: "kept" }))).toBe("Stop will be sent when back online");
    expect(describePhase(turn("stopping", { stopRequested: true, stopState: "sent" }))).toBe("stopping…");
    expect(describePhase(turn("stopping", { stopRequested: true, stopState: "accepted" }))).toBe("stopping: the host is stopping it");
    expect(describePhase(turn("stopping", { stopRequested: true }))).toBe("stopping…");
  });

  it("no phase before the host's terminal reads like an ending", () => {
    const endings = new Set(
      [
        ended("completed", TurnReasons.completed),
        ended("cancelled", TurnReasons.cancelledDuringToolExecution, { kind: "user" }),
        ended("failed", HOST_RESTARTED_REASON),
      ].map(describePhase),
    );
    const before: SessionTurn[] = [
      ...(["starting", "queued", "running", "reconnecting"] as const).map((phase) => turn(phase)),
      ...(["kept", "sent", "accepted", undefined] as const).map((stopState) => turn("stopping", { stopRequested: true, ...(stopState && { stopState }) })),
    ];
    for (const shown of before.map(describePhase)) expect(endings.has(shown), shown).toBe(false);
  });

  it("an ended turn reads as describeTerminal of its own terminal", () => {
    for (const t of [
      ended("completed", TurnReasons.completed),
      ended("cancelled", TurnReasons.cancelledDuringToolExecution, { kind: "user" }),
      ended("cancelled", TurnReasons.cancelledDuringToolExecution, { kind: "hook", reason: "turn time limit (300 ms)" }),
      ended("failed", HOST_RESTARTED_REASON),
    ]) {
      expect(describePhase(t)).toBe(describeTerminal(t.terminal as TurnCompletedParams));
    }
    expect(describePhase(ended("cancelled", "x", { kind: "user" }))).toBe("you stopped it");
    expect(describePhase(ended("failed", HOST_RESTARTED_REASON))).toBe("the host restarted");
  });

  it("an unknown turn says why, or that what happened is not known", () => {
    expect(describePhase(turn("unknown", { unknownReason: "the host no longer knows the session" }))).toBe("unknown: the host no longer knows the session");
    expect(describePhase(turn("unknown"))).toBe("unknown: what happened is not known");
    expect(describePhase(turn("unknown", { unknownReason: " " }))).toBe("unknown: what happened is not known");
  });
});

describe("canStop", () => {
  it("is true while the turn is under way and Stop was not pressed", () => {
    for (const phase of ["starting", "queued", "running", "reconnecting"] as const) expect(canStop(turn(phase)), phase).toBe(true);
  });

  it("is false once Stop was pressed, whatever the phase shows, and once the turn ended or became unknown", () => {
    expect(canStop(turn("stopping", { stopRequested: true, stopState: "kept" }))).toBe(false);
    expect(canStop(turn("reconnecting", { stopRequested: true }))).toBe(false);
    expect(canStop(turn("running", { stopRequested: true }))).toBe(false);
    expect(canStop(ended("completed", TurnReasons.completed))).toBe(false);
    expect(canStop(turn("unknown", { unknownReason: "gave up" }))).toBe(false);
  });
});
