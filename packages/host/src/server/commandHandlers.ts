/** The turn commands a session answers (`turn/steer`, `turn/cancel`), and what a handled command returns. */
import { RejectionReasons } from "@muse-code/protocol";
import type { SessionAgent } from "../agent/sessionAgent.js";
import type { SteerOutcome } from "../agent/sessionAgentOptions.js";
import type { ReplayRange } from "./commandCache.js";
import { inputParam, invalid, rejection, STEERING_UNSUPPORTED, stringParam } from "./commandParams.js";
import type { CommandError } from "./jsonRpc.js";

/** A command's answer, with what goes after it. */
export interface Handled {
  result: Record<string, unknown>;
  /** Notifications re-sent right after the response, to the same subscriber (session/resume). */
  replay?: ReplayRange;
  /** The answer goes out (and is remembered) only once this calls back: its records are durable (turn/cancel). */
  after?: (done: (error?: Error) => void) => void;
}

/**
 * `turn/steer`: steering input for a running turn. Answered once its `message` item is logged
 * durably, and before that item's `item/started` (the agent sends it right after the answer).
 * Refused: `unknown_turn`, `already_terminal` (with the terminal), `turn_not_running` (queued,
 * or being cancelled), `inbox_full` (over the caps).
 */
export function steerCommand(session: SessionAgent, params: Record<string, unknown>, commandId: string): Handled {
  const turnId = stringParam(params, "turnId");
  const input = inputParam(params);
  if (input.every((part) => part.text === "")) throw invalid("input must have some text: an empty input steers nothing");
  // A retry of an accepted steer answers it again (its turn may have ended since).
  const steered = session.steeredTurn(commandId);
  // Answered like the first attempt: once its item is durable (the agent waits for that).
  if (steered !== undefined)
    return { result: { turnId: steered, steerId: commandId }, after: (callback) => session.steer(steered, commandId, input, (_, error) => callback(error)) };
  const state = session.turnState(turnId);
  if (state === undefined) throw rejection(commandId, RejectionReasons.unknownTurn, `unknown turn ${turnId}`, { turnId });
  if (state.state === "queued") {
    throw rejection(commandId, RejectionReasons.turnNotRunning, `turn ${turnId} is queued: it takes no steering until it runs`, { turnId });
  }
  let done: ((error?: Error) => void) | undefined;
  let settled: { error?: Error } | undefined;
  session.steer(turnId, commandId, input, (outcome, error) => {
    const refused = steerRefusal(outcome, commandId, turnId);
    settled = refused === undefined ? (error === undefined ? {} : { error }) : { error: refused };
    done?.(settled.error);
  });
  return {
    result: { turnId, steerId: commandId },
    after: (callback) => {
      if (settled !== undefined) return callback(settled.error);
      done = callback;
    },
  };
}

/** `turn/cancel`: refused `unknown_turn` or `already_terminal` (with the terminal); answered once the cancel's records are durable. */
export function cancelCommand(session: SessionAgent, params: Record<string, unknown>, commandId: string): Handled {
  const turnId = stringParam(params, "turnId");
  const keepInbox = params["keepInbox"];
  if (keepInbox !== undefined && typeof keepInbox !== "boolean") throw invalid("keepInbox must be a boolean");
  const state = session.turnState(turnId);
  if (state === undefined) throw rejection(commandId, RejectionReasons.unknownTurn, `unknown turn ${turnId}`, { turnId });
  if (state.state === "terminal") {
    throw rejection(commandId, RejectionReasons.alreadyTerminal, `turn ${turnId} is already ${state.params.terminal}`, {
      turnId,
      terminal: state.params.terminal,
    });
  }
  let done: ((error?: Error) => void) | undefined;
  let settled: { error?: Error } | undefined;
  // Its records are synced with the session's next batch, off the event loop: the answer waits for them.
  session.cancelTurn(turnId, { kind: "user" }, keepInbox === true, (error) => {
    settled = error === undefined ? {} : { error };
    done?.(error);
  });
  return {
    result: { turnId },
    after: (callback) => {
      if (settled !== undefined) return callback(settled.error);
      done = callback;
    },
  };
}

/** The rejection a refused `turn/steer` gets, or `undefined` when it was accepted. */
function steerRefusal(outcome: SteerOutcome, commandId: string, turnId: string): CommandError | undefined {
  switch (outcome.kind) {
    case "accepted":
      return undefined;
    case "terminal":
      return rejection(commandId, RejectionReasons.alreadyTerminal, `turn ${turnId} is already ${outcome.params.terminal}`, {
        turnId,
        terminal: outcome.params.terminal,
      });
    case "notRunning":
      if (outcome.agentRefusal !== undefined) {
        return rejection(commandId, RejectionReasons.turnNotRunning, `the agent running turn ${turnId} refused the steering input: ${outcome.agentRefusal}`, {
          turnId,
          agentRefusal: outcome.agentRefusal,
        });
      }
      return rejection(
        commandId,
        RejectionReasons.turnNotRunning,
        outcome.cancelling ? `turn ${turnId} is being cancelled: it takes no more steering` : `turn ${turnId} is not running`,
        outcome.cancelling ? { turnId, cancelling: true } : { turnId },
      );
    case "full":
      return rejection(commandId, RejectionReasons.inboxFull, outcome.refusal.message, { turnId, ...outcome.refusal.details });
    case "unsupported":
      return rejection(commandId, STEERING_UNSUPPORTED, outcome.message, { turnId });
  }
}
