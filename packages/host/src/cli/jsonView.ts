/** JsonView: what `muse run --json` and `muse resume --json` show of a session, one NDJSON event per line. */
import type { MspNotification, ToolApproveParams, ToolApproveResult } from "@muse-code/sdk";
import type { SessionDetails, SessionView } from "./sessionView.js";
import type { SteerRefusal } from "./steerRefusal.js";

/**
 * The NDJSON view (`--json`): one JSON object a line, `type` first: `session` (`sessionId`,
 * `model?`, `replayed?`, `after?`, `items?`), `notification` (`method`, `params`, `emittedAtMs?`:
 * the wire's, so an `item/delta` is its `append`; fold with `foldItem`), `queued`, `stopping`, `stopAnswered` (`ack`), `note`
 * (`text`), `steerRefused` (`text`, `reason?`, `why`: a typed line the host did not take as steering), `approvalAsked` (the `tool/approve` params), `approvalAnswered` (`sessionId`,
 * `turnId`, `itemId`, `callId`, `decision`, `reason?`), and last `exit` (`code`, `why?`).
 *
 * @example
 * ```ts
 * const view = new JsonView((line) => process.stdout.write(`${line}\n`));
 * view.end(0); // {"type":"exit","code":0}
 * ```
 */
export class JsonView implements SessionView {
  readonly #emit: (line: string) => void;

  constructor(emit: (line: string) => void) {
    this.#emit = emit;
  }

  session(details: SessionDetails): void {
    this.#out({ type: "session", ...details });
  }

  notification(notification: MspNotification): void {
    this.#out({ type: "notification", ...notification });
  }

  queued(turnId: string): void {
    this.#out({ type: "queued", turnId });
  }

  stopping(turnId: string): void {
    this.#out({ type: "stopping", turnId });
  }

  stopAnswered(turnId: string, ack: "accepted" | "already_terminal"): void {
    this.#out({ type: "stopAnswered", turnId, ack });
  }

  note(text: string): void {
    this.#out({ type: "note", text });
  }

  steerRefused(text: string, refusal: SteerRefusal): void {
    this.#out({ type: "steerRefused", text, ...refusal });
  }

  approvalAsked(request: ToolApproveParams): void {
    this.#out({ type: "approvalAsked", ...request });
  }

  approvalAnswered(request: ToolApproveParams, answer: ToolApproveResult): void {
    const { sessionId, turnId, itemId, callId } = request;
    this.#out({ type: "approvalAnswered", sessionId, turnId, itemId, callId, ...answer });
  }

  promptOpened(_question: string): void {}

  promptClosed(_answer: string): void {}

  end(code: number, why?: string): void {
    this.#out(why === undefined ? { type: "exit", code } : { type: "exit", code, why });
  }

  #out(event: Record<string, unknown>): void {
    this.#emit(JSON.stringify(event));
  }
}
