/**
 * The steer box: one line of input that steers the turn running now (MSP 2.1 `turn/steer`,
 * through `session.steer(turnId, text)`). It is enabled only while a turn runs and the connection
 * is open: steering is sent on a live connection or not at all. The page says what became of it:
 * "Steered: …" once the host took it (the turn then shows it as the user's message, which the
 * model hears at its next step), or why not (the turn already ended, it is queued, the inbox is
 * full, the connection is down). `data-turn-id` names the turn it steers, for tests.
 */
import { MspError } from "@muse-code/sdk";
import type { SessionTurn } from "@muse-code/sdk/session";

/** The page's steer form: its input line and its button. */
export interface SteerBoxParts {
  form: HTMLFormElement;
  input: HTMLInputElement;
  button: HTMLButtonElement;
}

/** Binds the steer form to the turn that runs now. */
export class SteerBox {
  readonly #parts: SteerBoxParts;
  readonly #steer: (turnId: string, text: string) => Promise<unknown>;
  readonly #say: (text: string, tone?: "error") => void;
  #turnId: string | undefined;
  #online = false;

  constructor(parts: SteerBoxParts, steer: (turnId: string, text: string) => Promise<unknown>, say: (text: string, tone?: "error") => void) {
    this.#parts = parts;
    this.#steer = steer;
    this.#say = say;
    parts.form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.#submit();
    });
  }

  /** Follow the session: the running turn (if any) and whether the connection is open. */
  render(turns: readonly SessionTurn[], online: boolean): void {
    this.#turnId = turns.find((turn) => turn.phase === "running")?.turnId;
    this.#online = online;
    const enabled = this.#turnId !== undefined && online;
    this.#parts.button.disabled = !enabled;
    this.#parts.input.disabled = !enabled;
    if (this.#turnId === undefined) delete this.#parts.form.dataset["turnId"];
    else this.#parts.form.dataset["turnId"] = this.#turnId;
  }

  async #submit(): Promise<void> {
    const turnId = this.#turnId;
    const text = this.#parts.input.value.trim();
    if (turnId === undefined || !this.#online || text === "") return;
    this.#parts.input.value = "";
    try {
      await this.#steer(turnId, text);
      this.#say(`Steered: ${text}`);
    } catch (error) {
      this.#parts.input.value = text; // not taken: keep it, so the user can send it as a new turn
      this.#say(`Not steered: ${whyNot(error)}`, "error");
    }
  }
}

/** Why a steer was not taken, in a few words. */
function whyNot(error: unknown): string {
  if (!MspError.is(error)) return error instanceof Error ? error.message : String(error);
  if (error.kind === "connectionClosed") return "the connection is down";
  if (error.kind !== "commandRejected") return error.message;
  switch (error.data.reason) {
    case "already_terminal":
      return `the turn already ended (${String(error.data.terminal)})`;
    case "turn_not_running":
      return "the turn is not running";
    case "inbox_full":
      return "the turn has taken all the steering it can";
    default:
      return error.message;
  }
}
