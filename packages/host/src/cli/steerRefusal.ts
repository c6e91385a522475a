/** SteerRefusal: why `muse run` could not steer the running turn, in a few words (the demo's). */
import { MspError } from "@muse-code/sdk";
import { describeError } from "./describeError.js";

/**
 * A steer that was not taken: the host's refusal `reason` when it refused (`already_terminal`,
 * `turn_not_running`, `inbox_full`, `unknown_turn`), and why in words.
 */
export interface SteerRefusal {
  reason?: string;
  why: string;
}

/**
 * Why a `turn/steer` failed, in the words the demo's steer box uses ("the turn already ended
 * (completed)", "the turn is not running", "the turn has taken all the steering it can", "the
 * connection is down"); another error is described as `muse` describes errors.
 */
export function steerRefusal(error: unknown): SteerRefusal {
  if (!MspError.is(error)) return { why: describeError(error) };
  if (error.kind === "connectionClosed") return { why: "the connection is down" };
  if (error.kind === "timeout") return { why: `no answer from the host in ${Math.round(error.data.timeoutMs / 1000)} s` };
  if (error.kind !== "commandRejected") return { why: describeError(error) };
  const reason = error.data.reason;
  switch (reason) {
    case "already_terminal":
      return { reason, why: `the turn already ended (${String(error.data.terminal)})` };
    case "turn_not_running":
      return { reason, why: "the turn is not running (queued, or being stopped)" };
    case "inbox_full":
      return { reason, why: "the turn has taken all the steering it can" };
    default:
      return { reason, why: error.message };
  }
}
