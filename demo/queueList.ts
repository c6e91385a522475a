/**
 * The queue: turns sent while another runs, waiting in the host's inbox, oldest first. Each can
 * be removed on its own (its own `turn/cancel`: it ends "cancelled before start"); a Stop of the
 * running turn discards them all, each with its own terminal.
 */
import type { TurnBook, TurnEntry } from "./turnBook.js";

/** Renders the pending turns of a {@link TurnBook} into the queue list, with a Remove button each. */
export class QueueList {
  readonly #list: HTMLOListElement;
  readonly #empty: HTMLElement;
  readonly #count: HTMLElement;
  readonly #book: TurnBook;

  constructor(elements: { list: HTMLOListElement; empty: HTMLElement; count: HTMLElement }, book: TurnBook) {
    this.#list = elements.list;
    this.#empty = elements.empty;
    this.#count = elements.count;
    this.#book = book;
    book.subscribe(() => this.render());
    this.render();
  }

  render(): void {
    const pending = this.#book.entries().filter(isPending);
    const shown = [...this.#list.children].map((li) => (li as HTMLElement).dataset["turnId"]);
    if (shown.join() !== pending.map((entry) => entry.turnId).join()) this.#list.replaceChildren(...pending.map(queueItem));
    for (const li of this.#list.children) {
      const entry = this.#book.get((li as HTMLElement).dataset["turnId"] ?? "");
      const button = li.querySelector("button");
      if (entry !== undefined && button !== null) button.disabled = entry.stop?.getSnapshot().canStop !== true;
    }
    this.#empty.hidden = pending.length > 0;
    this.#count.textContent = String(pending.length);
  }
}

/** Waiting to run: sent and not yet acked, or acked as queued, and not ended by a Stop meanwhile. */
function isPending(entry: TurnEntry): boolean {
  const state = entry.stop?.getSnapshot().state;
  return (entry.phase === "starting" || entry.phase === "queued") && state !== "ended" && state !== "failed";
}

function queueItem(entry: TurnEntry): HTMLLIElement {
  const li = document.createElement("li");
  li.dataset["turnId"] = entry.turnId;
  const text = document.createElement("span");
  text.textContent = entry.prompt ?? entry.turnId;
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "remove";
  remove.textContent = "Remove";
  remove.setAttribute("aria-label", `Remove "${entry.prompt ?? entry.turnId}" from the queue`);
  remove.addEventListener("click", () => {
    entry.stopRequested = true;
    void entry.stop?.stop();
  });
  li.append(text, " ", remove);
  return li;
}
