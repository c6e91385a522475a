/**
 * `muse resume`: session/resume a session (after `--after CURSOR`, or from its start), show the
 * replayed notifications, then follow the session while a turn in it is still running. Ctrl-C
 * stops the running turns as in `muse run`. The subagent turns below the session's turns
 * that the host sends live are shown nested, as in `muse run`; a stop is sent for the session's own
 * turns only (the host stops the tree below each), and only they decide when `muse` is done.
 */
import { MspError, type Item, type MspNotification, type TurnCompletedParams } from "@muse-code/sdk";
import type { CommandContext } from "./commandContext.js";
import { ExitCodes, exitCodeOf, type ExitCode } from "./exitCodes.js";
import { notificationItem } from "./notificationItem.js";
import { notificationTurn } from "./notificationTurn.js";
import { checkedHostInfo } from "./checkedHostInfo.js";
import { describeError } from "./describeError.js";
import { STOP_NOTICE_MS } from "./interrupts.js";
import { ShownTree } from "./shownTree.js";

/** Bound on the replay: from the resume's answer until the last replayed notification. @unit milliseconds */
const REPLAY_TIMEOUT_MS = 30_000;

/** Options of {@link resumeCommand}. */
export interface ResumeOptions {
  session: string;
  after?: string;
}

/**
 * Run `muse resume`. Resolves with the exit code: 0 when the session is idle after the replay, else
 * the code of the last turn that ends while `muse` follows (0, 130, 1); 3 when the connection is
 * lost; 130 after a second Ctrl-C. Throws what a command threw (an unknown session, a bad cursor).
 */
export async function resumeCommand(ctx: CommandContext, options: ResumeOptions): Promise<ExitCode> {
  const { host, view } = ctx;
  const { client } = host;
  const sessionId = options.session;
  let finished = false;
  let settle!: (code: ExitCode) => void;
  const done = new Promise<ExitCode>((r) => (settle = r));
  const resolveDone = (code: ExitCode) => {
    finished = true;
    settle(code);
  };
  const open = new Set<string>();
  let last: TurnCompletedParams | undefined;
  let replaying = true;
  let expected = Infinity;
  let seen = 0;
  /** Notifications that came before the resume's answer was read, each with its item as folded when it came. */
  let buffered: Array<[MspNotification, Item | undefined, boolean, boolean?]> | undefined = [];
  /** The session's own turns: a notification of a turn below one of them (a subagent's) is shown too. */
  const own = new Set<string>();
  const tree = ctx.tree ?? new ShownTree();
  // The question the host asks again on resume shows after the replay it follows.
  const releaseQuestions = ctx.holdQuestions();
  const settleIfIdle = () => {
    if (!replaying) releaseQuestions();
    if (!replaying && open.size === 0) resolveDone(last === undefined ? ExitCodes.completed : exitCodeOf(last.terminal));
  };
  /** A replayed notification was heard: the replay ends with the `replayed`-th (the answer counts the whole tree's). */
  const heard = () => {
    seen += 1;
    if (replaying && seen >= expected) replaying = false;
  };
  const show = (notification: MspNotification, item: Item | undefined, mine: boolean) => {
    view.notification(notification, item);
    if (mine) {
      // A subagent's is shown, but the session's own turns are what muse follows.
      const turnId = notificationTurn(notification);
      if (turnId !== undefined) {
        if (notification.method === "turn/completed") {
          open.delete(turnId);
          last = notification.params as unknown as TurnCompletedParams;
        } else open.add(turnId);
      }
    }
    heard();
    settleIfIdle();
  };
  const onNotification = (notification: MspNotification) => {
    // The item now: the client folds the next notification before a buffered one is shown.
    const item = notificationItem(client.items, notification);
    tree.observe(notification, item);
    const turnId = notificationTurn(notification);
    const mine = notification.params?.["sessionId"] === sessionId;
    if (mine && turnId !== undefined) own.add(turnId);
    if (!mine && (turnId === undefined || !tree.isBelow(turnId, own))) {
      // Not shown, but this connection hears only the resumed session's tree: it counts toward the replay.
      if (buffered !== undefined) buffered.push([notification, undefined, false, true]);
      else {
        heard();
        settleIfIdle();
      }
      return;
    }
    if (buffered !== undefined) buffered.push([notification, item, mine]);
    else show(notification, item, mine);
  };
  client.events.on("notification", onNotification);
  void host.lost.then((info) => {
    if (finished) return; // the session went idle first: that is the outcome
    ctx.err(`connection lost: ${info.reason}`);
    for (const line of host.stderrTail()) ctx.err(`  host: ${line}`);
    resolveDone(ExitCodes.connectionLost);
  });
  let stopping = false;
  const stops: Array<Promise<void>> = [];
  const offInterrupt = ctx.interrupts.on((press) => {
    if (press === 1 && open.size > 0 && !replaying) {
      stopping = true;
      for (const turnId of open) {
        view.stopping(turnId);
        const stop = client.cancelTurn({ sessionId, turnId }, { timeoutMs: STOP_NOTICE_MS }).then(
          (answer) => view.stopAnswered(turnId, answer.ack),
          (error: unknown) => {
            if (MspError.is(error) && error.kind === "connectionClosed") return;
            if (MspError.is(error) && error.kind === "timeout") return view.note(`no terminal ${STOP_NOTICE_MS / 1000} s after the stop; still waiting for it`);
            ctx.err(`the stop failed: ${describeError(error)}`);
            resolveDone(ExitCodes.failed);
          },
        );
        stops.push(stop);
      }
      return;
    }
    view.note(stopping ? "closing the connection without waiting for the terminal" : "interrupted");
    void host.kill().then(() => resolveDone(ExitCodes.cancelled));
  });
  try {
    const answer = await Promise.race([
      (async () => {
        await checkedHostInfo(client);
        return client.command("session/resume", options.after === undefined ? { sessionId } : { sessionId, afterCursor: options.after });
      })(),
      done.then(() => undefined),
    ]);
    if (answer === undefined) return await done;
    expected = answer.replayed;
    // After a cursor, the answer's items (in progress there) are the base the replayed deltas fold onto.
    const items = options.after === undefined || answer.items === undefined ? {} : { items: answer.items };
    view.session(
      options.after === undefined ? { sessionId, replayed: answer.replayed } : { sessionId, replayed: answer.replayed, after: options.after, ...items },
    );
    if (expected === 0) replaying = false;
    const early = buffered ?? [];
    buffered = undefined;
    for (const [notification, item, mine, hidden] of early) {
      if (hidden === true) heard();
      else show(notification, item, mine);
    }
    settleIfIdle();
    const timer = setTimeout(() => {
      if (!replaying) return;
      ctx.err(`the host said it would replay ${expected} notification(s) but sent ${seen} within ${REPLAY_TIMEOUT_MS / 1000} s`);
      resolveDone(ExitCodes.failed);
    }, REPLAY_TIMEOUT_MS);
    timer.unref();
    const code = await done;
    clearTimeout(timer);
    // Each stop's answer comes after its terminal: show it before the end.
    await Promise.all(stops);
    return code;
  } catch (error) {
    if (MspError.is(error) && error.kind === "connectionClosed") return await done;
    throw error;
  } finally {
    releaseQuestions();
    offInterrupt();
    client.events.off("notification", onNotification);
  }
}
