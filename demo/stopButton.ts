/**
 * The Stop button. It stops the turn that runs now (the oldest one whose StopController can still
 * stop or is stopping) and mirrors that controller: "Stop" while it can stop; "Stopping…",
 * disabled and `aria-busy="true"` from the click until the turn's own terminal arrives. Clicks
 * while stopping change nothing: StopController shares the first press, so one `turn/cancel`
 * goes on the wire. `data-state` holds the controller's state for tests and styles.
 */
import type { StopSnapshot } from "@muse-code/sdk/ui";
import type { TurnBook, TurnEntry } from "./turnBook.js";

/** Binds the page's Stop button to the StopController of the turn that runs now. */
export class StopButton {
  readonly #button: HTMLButtonElement;
  readonly #book: TurnBook;
  /** The turn the button stops, or stopped last (its final state stays on show until the next). */
  #target: TurnEntry | undefined;

  constructor(button: HTMLButtonElement, book: TurnBook) {
    this.#button = button;
    this.#book = book;
    button.addEventListener("click", () => this.#press());
    book.subscribe(() => this.render());
    this.render();
  }

  render(): void {
    this.#target = this.#book.entries().find(isStoppable) ?? this.#target;
    const snapshot = this.#target?.stop?.getSnapshot();
    const stopping = snapshot?.state === "stopping";
    this.#button.textContent = stopping ? "Stopping…" : "Stop";
    this.#button.disabled = snapshot?.canStop !== true;
    this.#button.setAttribute("aria-busy", String(stopping));
    this.#button.dataset["state"] = snapshot?.state ?? "idle";
  }

  #press(): void {
    const target = this.#target;
    if (target?.stop === undefined || !target.stop.getSnapshot().canStop) return;
    target.stopRequested = true;
    void target.stop.stop(); // never rejects: a failure is the snapshot's `error`
  }
}

/** A turn the button acts on: running or stopping, not one still waiting in the queue behind it. */
function isStoppable(entry: TurnEntry): boolean {
  const snapshot: StopSnapshot | undefined = entry.stop?.getSnapshot();
  if (snapshot === undefined || entry.phase === "ended") return false;
  if (entry.phase === "queued") return false;
  return snapshot.state === "starting" || snapshot.state === "running" || snapshot.state === "stopping" || (snapshot.state === "failed" && snapshot.canStop);
}
