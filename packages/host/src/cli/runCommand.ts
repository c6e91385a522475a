/**
 * `muse run`: start one turn and stream it until its own terminal. Ctrl-C is Stop: the first sends
 * `turn/cancel` (TurnHandle.cancel) and keeps streaming until the terminal, which says how the
 * turn really ended; the second closes the connection at once. A line typed while the turn runs
 * (and no approval question is open) steers it (`turn/steer`, MSP 2.1): the stream then shows it
 * as the user's message and what became of it; a refusal is printed as one line.
 *
 * Subagents: the child turns the turn delegates to (and theirs) are shown too, nested
 * under it (ShownTree, fed every notification of the connection). Ctrl-C still sends one
 * `turn/cancel`, of the top-level turn: the host stops the tree below it, and `muse` exits on the
 * top-level turn's own terminal, which comes after every child's.
 */
import { MspError, type MspNotification, type TurnCompletedParams } from "@muse-code/sdk";
import { checkedHostInfo } from "./checkedHostInfo.js";
import type { CommandContext } from "./commandContext.js";
import { describeError } from "./describeError.js";
import { ExitCodes, exitCodeOf, type ExitCode } from "./exitCodes.js";
import { STOP_NOTICE_MS } from "./interrupts.js";
import { notificationItem } from "./notificationItem.js";
import { notificationTurn } from "./notificationTurn.js";
import { MAX_TYPED_LINE } from "./promptInput.js";
import { ShownTree } from "./shownTree.js";
import { steerRefusal } from "./steerRefusal.js";

/** Bound on one `turn/steer` (its answer); past it the line is reported not steered. @unit milliseconds */
export const STEER_TIMEOUT_MS = 10_000;
/** At most this many typed steers wait for the host's answer at once; a line past it is not sent (the host takes 16 a turn). @unit steers */
export const MAX_STEERS_IN_FLIGHT = 16;

/** Options of {@link runTurnCommand}. */
export interface RunTurnOptions {
  prompt: string;
  session?: string;
  model?: string;
  keepInbox: boolean;
}

/**
 * A promise with its resolver, for the first of several outcomes.
 */
function outcome<T>(): { promise: Promise<T>; resolve: (value: T) => void; readonly settled: boolean } {
  let resolve!: (value: T) => void;
  let settled = false;
  const promise = new Promise<T>((r) => (resolve = r));
  return {
    promise,
    resolve: (value) => {
      settled = true;
      resolve(value);
    },
    get settled() {
      return settled;
    },
  };
}

/**
 * Run `muse run`: host/info, session/create (or session/resume of `--session`, and
 * session/setModel for `--model`), turn/start, then every notification of that turn to the view
 * until its turn/completed. Resolves with the exit code: the terminal's (0, 130, 1), 3 when the
 * connection is lost first, 130 after a second Ctrl-C. Throws what a command threw (the caller
 * prints it).
 */
export async function runTurnCommand(ctx: CommandContext, options: RunTurnOptions): Promise<ExitCode> {
  const { host, view } = ctx;
  const { client } = host;
  const done = outcome<ExitCode>();
  // Until a turn exists, Ctrl-C just quits.
  let onInterrupt: (press: number) => void = () => {
    view.note("interrupted");
    void host.kill().then(() => done.resolve(ExitCodes.cancelled));
  };
  const offInterrupt = ctx.interrupts.on((press) => onInterrupt(press));
  const lost = host.lost.then((info) => {
    if (done.settled) return; // the turn ended first: its terminal is the outcome
    ctx.err(`connection lost: ${info.reason}`);
    for (const line of host.stderrTail()) ctx.err(`  host: ${line}`);
    done.resolve(ExitCodes.connectionLost);
  });
  void lost;
  const setup = (async () => {
    await checkedHostInfo(client);
    let sessionId: string;
    let model: string | undefined = options.model;
    if (options.session !== undefined) {
      sessionId = options.session;
      await client.command("session/resume", { sessionId });
      if (options.model !== undefined) await client.command("session/setModel", { sessionId, model: options.model });
    } else {
      const created = await client.command("session/create", options.model === undefined ? {} : { model: options.model });
      sessionId = created.sessionId;
      model = created.model;
    }
    view.session(model === undefined ? { sessionId } : { sessionId, model });
    return sessionId;
  })();
  // A connection lost during setup is reported once, by `lost`.
  const settled = setup.catch((error: unknown) => {
    if (MspError.is(error) && error.kind === "connectionClosed") return done.promise.then(() => undefined);
    throw error;
  });
  let sessionId: string | undefined;
  try {
    sessionId = await Promise.race([settled, done.promise.then(() => undefined)]);
  } catch (error) {
    offInterrupt();
    throw error;
  }
  if (sessionId === undefined) {
    offInterrupt();
    return done.promise;
  }

  const turn = client.startTurn({ sessionId, input: [{ type: "text", text: options.prompt }] });
  const ours = new Set([turn.commandId]);
  const tree = ctx.tree ?? new ShownTree();
  const onNotification = (notification: MspNotification) => {
    const item = notificationItem(client.items, notification);
    tree.observe(notification, item);
    const turnId = notificationTurn(notification);
    // The turn's own notifications, and its subagents' (children, grandchildren, …).
    if (turnId === undefined || !tree.isBelow(turnId, ours)) return;
    view.notification(notification, item);
    if (notification.method === "turn/completed" && ours.has(turnId))
      done.resolve(exitCodeOf((notification.params as unknown as TurnCompletedParams).terminal));
  };
  client.events.on("notification", onNotification);
  // Steering: from the ack until the terminal, each line typed (no question open) is a turn/steer.
  const steers = new Set<Promise<void>>();
  let offLines: () => void = () => {};
  const steer = (text: string) => {
    if (steers.size >= MAX_STEERS_IN_FLIGHT) {
      view.note(`not steered: ${MAX_STEERS_IN_FLIGHT} steers are already waiting for the host's answer`);
      return;
    }
    const sent = turn.steer([{ type: "text", text }], { timeoutMs: STEER_TIMEOUT_MS }).then(
      () => undefined, // taken: the stream shows it (a message item by the user) and its fate
      (error: unknown) => view.steerRefused(text, steerRefusal(error)),
    );
    steers.add(sent);
    void sent.finally(() => steers.delete(sent));
  };
  turn.accepted.then(
    (ack) => {
      ours.add(ack.turnId);
      if (ack.disposition === "queued") view.queued(ack.turnId);
      if (done.settled || ctx.typedLines === undefined) return;
      offLines = ctx.typedLines((line) => {
        if ("tooLong" in line) view.note(`not steered: the line is ${line.tooLong} characters; at most ${MAX_TYPED_LINE} are sent`);
        else if (line.text.trim() !== "") steer(line.text.trim());
      });
    },
    (error: unknown) => {
      if (MspError.is(error) && error.kind === "connectionClosed") return; // `lost` says it
      ctx.err(describeError(error));
      done.resolve(ExitCodes.failed);
    },
  );
  let stop: Promise<void> | undefined;
  onInterrupt = (press) => {
    if (press === 1) {
      view.stopping(turn.turnId ?? turn.commandId);
      stop = turn.cancel({ keepInbox: options.keepInbox, timeoutMs: STOP_NOTICE_MS }).then(
        (answer) => view.stopAnswered(answer.turnCompleted.turnId, answer.ack),
        (error: unknown) => {
          if (MspError.is(error) && error.kind === "connectionClosed") return;
          if (MspError.is(error) && error.kind === "timeout") {
            view.note(`no terminal ${STOP_NOTICE_MS / 1000} s after the stop; still waiting for it (Ctrl-C again closes the connection)`);
            return;
          }
          ctx.err(`the stop failed: ${describeError(error)}`);
          done.resolve(ExitCodes.failed);
        },
      );
      return;
    }
    if (press === 2) {
      view.note("closing the connection without waiting for the terminal");
      void host.kill().then(() => done.resolve(ExitCodes.cancelled));
    }
  };
  const code = await done.promise;
  offLines();
  // The stop's answer comes after the terminal (cancelTurn resolves with it): show it before the end.
  await stop;
  // A steer still unanswered says what became of it (each is bounded by STEER_TIMEOUT_MS).
  await Promise.allSettled([...steers]);
  offInterrupt();
  client.events.off("notification", onNotification);
  return code;
}
