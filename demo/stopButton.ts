/**
 * The Stop button. It stops the turn that runs now (the oldest one that is not over and not
 * waiting in the queue) through `session.stop(turnId)`, and mirrors that turn's phase in the
 * session: "Stop" while it runs; "Stopping…", disabled and `aria-busy="true"` from the click until
 * the turn's own terminal arrives, across a drop and a reload too (the session keeps the Stop
 * and sends it once, now or after the reconnect). Pressed while the connection is down, the
 * Stop is kept and sent once the session is back. `data-state` holds the turn's phase (or
 * `idle`) for tests and styles.
 *
 * A turn with subagents (issue 23): one Stop stops the tree. From the click until the turn's own
 * terminal the button counts the subagents down from the turn's `subagentProgress`, "stopping 3 of
 * 5 subagents…" (`describeTreeProgress`), then "Stopping…" once every one ended; the host ends the tree from the
 * leaves up, so the turn's own terminal comes last.
 */
import type { SessionTurn } from "@muse-code/sdk/session";
import { stoppingWords } from "./turnList.js";

/** Binds the page's Stop button to the turn that runs now. */
export class StopButton {
  readonly #button: HTMLButtonElement;
  readonly #stop: (turnId: string) => void;
  /** The turn the button stops, or stopped last (its final state stays on show until the next). */
  #target: SessionTurn | undefined;

  constructor(button: HTMLButtonElement, stop: (turnId: string) => void) {
    this.#button = button;
    this.#stop = stop;
    button.addEventListener("click", () => this.#press());
  }

  render(turns: readonly SessionTurn[]): void {
    const previous = this.#target;
    this.#target = turns.find(isStoppable) ?? turns.find((turn) => turn.turnId === previous?.turnId) ?? previous;
    const turn = this.#target;
    const stopping = turn?.phase === "stopping";
    const text = turn !== undefined && stopping ? stoppingWords(turn.subagentProgress) : "Stop";
    if (this.#button.textContent !== text) this.#button.textContent = text;
    this.#button.disabled = turn === undefined || !canStop(turn);
    this.#button.setAttribute("aria-busy", String(stopping));
    this.#button.dataset["state"] = turn?.phase ?? "idle";
  }

  #press(): void {
    const turn = this.#target;
    if (turn === undefined || !canStop(turn)) return;
    this.#stop(turn.turnId); // one turn/cancel however often it is pressed, now or after the reconnect
  }
}

/** A turn the button acts on: not over, and not one still waiting in the queue behind it. */
function isStoppable(turn: SessionTurn): boolean {
  return turn.phase === "starting" || turn.phase === "running" || turn.phase === "stopping" || turn.phase === "reconnecting";
}

/** Stop can still be pressed: the turn is not over, and Stop was not pressed yet. */
function canStop(turn: SessionTurn): boolean {
  return isStoppable(turn) && !turn.stopRequested;
}
