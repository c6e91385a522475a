/**
 * The queue: turns sent while another runs, waiting in the host's inbox, oldest first. Each can
 * be removed on its own (its own `turn/cancel`, through `session.stop`: it ends "cancelled
 * before start"); a Stop of the running turn discards them all, each with its own terminal.
 */
import type { SessionTurn } from "@muse-code/sdk/session";
import { promptOf } from "./turnList.js";

/** Renders the session's pending turns into the queue list, with a Remove button each. */
export class QueueList {
  readonly #list: HTMLOListElement;
  readonly #empty: HTMLElement;
  readonly #count: HTMLElement;
  readonly #remove: (turnId: string) => void;

  constructor(elements: { list: HTMLOListElement; empty: HTMLElement; count: HTMLElement }, remove: (turnId: string) => void) {
    this.#list = elements.list;
    this.#empty = elements.empty;
    this.#count = elements.count;
    this.#remove = remove;
  }

  render(turns: readonly SessionTurn[]): void {
    const pending = turns.filter(isPending);
    const shown = [...this.#list.children].map((li) => (li as HTMLElement).dataset["turnId"]);
    if (shown.join() !== pending.map((turn) => turn.turnId).join()) this.#list.replaceChildren(...pending.map((turn) => this.#queueItem(turn)));
    this.#empty.hidden = pending.length > 0;
    this.#count.textContent = String(pending.length);
  }

  #queueItem(turn: SessionTurn): HTMLLIElement {
    const li = document.createElement("li");
    li.dataset["turnId"] = turn.turnId;
    const text = document.createElement("span");
    const label = promptOf(turn) ?? turn.turnId;
    text.textContent = label;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove";
    remove.textContent = "Remove";
    remove.setAttribute("aria-label", `Remove "${label}" from the queue`);
    remove.addEventListener("click", () => {
      remove.disabled = true;
      this.#remove(turn.turnId);
    });
    li.append(text, " ", remove);
    return li;
  }
}

/** Waiting to run: sent and not yet acked, or acked as queued (a Stop makes it `stopping`, and it leaves the queue). */
function isPending(turn: SessionTurn): boolean {
  return turn.phase === "starting" || turn.phase === "queued";
}
