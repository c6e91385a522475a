/**
 * The hooks: each reads the session's store with `useSyncExternalStore`, so a component
 * re-renders only when what it reads changed (snapshots are immutable and share what did not
 * change), and nothing is opened, subscribed twice or sent by rendering. `useSession` and
 * `useSessionTurn` hear the session at most once per animation frame (see {@link frameSubscribe}).
 */
import { useCallback, useMemo, useSyncExternalStore } from "react";
import type { MspSession } from "../session/mspSession.js";
import type { SessionConnection, SessionSnapshot, SessionTurn } from "../session/sessionSnapshot.js";
import type { WaitOptions } from "../types/waitOptions.js";
import type { ApprovalDecision, CommandResult, TurnInput } from "@muse-code/protocol";
import type { TreeProgress, TreeTurn } from "../ui/turnTree.js";

/** How long a change waits for an animation frame before it re-renders anyway (a hidden page has none). @unit milliseconds */
const FRAME_FALLBACK_MS = 100;

type Subscribe = (listener: () => void) => () => void;

/** A session's `subscribe` heard at most once per animation frame, and a way to hear what is pending now. */
interface FrameSubscription {
  readonly subscribe: Subscribe;
  /** Re-render now with what is pending: after the user's own Stop or answer, so no stale button is left for a frame. */
  readonly flush: () => void;
}

/**
 * `subscribe`, heard at most once per animation frame: changes between two frames (a turn's deltas) make
 * one re-render, in the frame that paints them, and a page does not render and read a growing text at
 * every delta. Without `requestAnimationFrame` (a server render, a test without a DOM) it is `subscribe`.
 */
function frameSubscribe(subscribe: Subscribe): FrameSubscription {
  if (typeof requestAnimationFrame !== "function") return { subscribe, flush: () => undefined };
  const pending = new Set<() => void>();
  return {
    subscribe: (listener) => {
      let frame: number | undefined;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const cancel = () => {
        if (frame !== undefined) cancelAnimationFrame(frame);
        if (timer !== undefined) clearTimeout(timer);
        frame = timer = undefined;
        pending.delete(fire);
      };
      const fire = () => {
        cancel();
        listener();
      };
      const off = subscribe(() => {
        if (frame !== undefined) return;
        frame = requestAnimationFrame(fire);
        timer = setTimeout(fire, FRAME_FALLBACK_MS);
        pending.add(fire);
      });
      return () => {
        off();
        cancel();
      };
    },
    flush: () => {
      for (const fire of [...pending]) fire();
    },
  };
}

const NO_TURNS: readonly TreeTurn[] = Object.freeze([]);
const NO_PROGRESS: TreeProgress = Object.freeze({ started: 0, ended: 0, running: 0 });

/**
 * The session's snapshot, kept current (re-rendered at most once per animation frame): the
 * connection, the turns with their items, phases, terminals and open questions.
 *
 * @example
 * ```tsx
 * function Transcript({ session }: { session: MspSession }) {
 *   const { turns } = useSession(session);
 *   return <ol>{turns.map((turn) => <li key={turn.turnId}>{turn.phase}</li>)}</ol>;
 * }
 * ```
 */
export function useSession(session: MspSession): SessionSnapshot {
  const frames = useMemo(() => frameSubscribe(session.subscribe), [session]);
  return useSyncExternalStore(frames.subscribe, session.getSnapshot, session.getSnapshot);
}

/**
 * The session's connection only: a status line re-renders when it changes, not on every delta.
 *
 * @example
 * ```tsx
 * function Status({ session }: { session: MspSession }) {
 *   const { state, reason } = useSessionConnection(session);
 *   return <p role="status">{state}{reason === undefined ? "" : `: ${reason.message}`}</p>;
 * }
 * ```
 */
export function useSessionConnection(session: MspSession): SessionConnection {
  const read = useCallback(() => session.getSnapshot().connection, [session]);
  return useSyncExternalStore(session.subscribe, read, read);
}

/**
 * What {@link useSessionTurn} returns: the turn (undefined while the session does not show it),
 * its Stop and a way to answer its questions.
 *
 * @example
 * ```tsx
 * const { turn, stop }: SessionTurnView = useSessionTurn(session, turnId);
 * ```
 */
export interface SessionTurnView {
  readonly turn: SessionTurn | undefined;
  /** Press Stop: one `turn/cancel` however often it is called (StrictMode and double clicks included). */
  readonly stop: () => void;
  /**
   * Answer the turn's open question about `itemId` with one of the decisions it offers (its
   * `decisions`: `approve`, `approveForSession`, `deny`, `denyAndStop`), or `cancelled`. Throws a
   * TypeError for a decision the question did not offer.
   */
  readonly answer: (itemId: string, decision: ApprovalDecision, reason?: string) => ApprovalDecision;
  /** Steer the running turn (`MspSession.steer`): resolves with `{turnId, steerId}`, rejects with a typed `MspError`. */
  readonly steer: (input: string | readonly TurnInput[], options?: WaitOptions) => Promise<CommandResult<"turn/steer">>;
  /**
   * The turn's own subagent turns, one level down, in the order they were linked: each
   * with its `state`, its own `terminal` once it came, and `children` (their ids) to go deeper.
   * Empty when the turn delegated nothing.
   */
  readonly children: readonly TreeTurn[];
  /** Every subagent turn below the turn, depth-first (each before its children): the rows of an indented tree. */
  readonly subagents: readonly TreeTurn[];
  /**
   * How many subagent turns below it started and ended, ready for `describeTreeProgress` from
   * `@muse-code/sdk/ui` (with `stopping` set from `turn.stopRequested`): "stopping 3 of 5 subagents…".
   */
  readonly progress: TreeProgress;
}

/**
 * One turn of the session, re-rendered only when that turn changed (at most once per animation
 * frame while it streams), with its Stop, and the subagent turns below it with their progress.
 *
 * @example
 * ```tsx
 * import { describeTerminal, describeTreeProgress } from "@muse-code/sdk/ui";
 *
 * function Subagents({ session, turnId }: { session: MspSession; turnId: string }) {
 *   const { turn, subagents, progress } = useSessionTurn(session, turnId);
 *   return (
 *     <section>
 *       <p role="status">{describeTreeProgress(progress, { stopping: turn?.stopRequested === true })}</p>
 *       <ul>{subagents.map((s) => <li key={s.turnId} style={{ marginLeft: `${s.depth}em` }}>{s.terminal === undefined ? s.state : describeTerminal(s.terminal)}</li>)}</ul>
 *     </section>
 *   );
 * }
 * ```
 *
 * @example
 * ```tsx
 * function StopButton({ session, turnId }: { session: MspSession; turnId: string }) {
 *   const { turn, stop } = useSessionTurn(session, turnId);
 *   const busy = turn !== undefined && turn.phase !== "ended" && turn.phase !== "unknown";
 *   return <button disabled={!busy || turn.stopRequested} onClick={stop}>{turn?.phase === "stopping" ? "Stopping…" : "Stop"}</button>;
 * }
 * ```
 */
export function useSessionTurn(session: MspSession, turnId: string): SessionTurnView {
  const read = useCallback(() => session.getSnapshot().turns.find((turn) => turn.turnId === turnId), [session, turnId]);
  const frames = useMemo(() => frameSubscribe(session.subscribe), [session]);
  const turn = useSyncExternalStore(frames.subscribe, read, read);
  // The user's own Stop or answer shows in the same event: a Stop leaves no Approve button for a frame.
  const stop = useCallback(() => {
    session.stop(turnId);
    frames.flush();
  }, [session, turnId, frames]);
  const answer = useCallback(
    (itemId: string, decision: ApprovalDecision, reason?: string) => {
      const answered = session.answerApproval(itemId, decision, reason);
      frames.flush();
      return answered;
    },
    [session, frames],
  );
  const steer = useCallback((input: string | readonly TurnInput[], options?: WaitOptions) => session.steer(turnId, input, options), [session, turnId]);
  // A turn's view is the same object until it changed, so these are too (nothing new per render when nothing moved).
  const subagents = turn?.subagents ?? NO_TURNS;
  const children = useMemo(() => subagents.filter((child) => child.parent?.turnId === turnId), [subagents, turnId]);
  return { turn, stop, answer, steer, children, subagents, progress: turn?.subagentProgress ?? NO_PROGRESS };
}
