/**
 * The list of turns: for each, the prompt, its items as they stream (message text, reasoning, a
 * tool call's live output), and how it ended (its terminal and reason, or the error that ended
 * its Stop button). One element per turn and per item, updated in place, so live output does not
 * flicker and a reader's scroll position in a tool's output is kept.
 */
import type { Item, ToolCallItem } from "@muse-code/sdk";
import type { StopSnapshot } from "@muse-code/sdk/ui";
import { describeError } from "./describeError.js";
import type { TurnBook, TurnEntry } from "./turnBook.js";

/** Renders every turn of a {@link TurnBook} into the turns list, updating elements in place. */
export class TurnList {
  readonly #root: HTMLOListElement;
  readonly #book: TurnBook;
  readonly #elements = new Map<string, HTMLLIElement>();

  constructor(root: HTMLOListElement, book: TurnBook) {
    this.#root = root;
    this.#book = book;
    for (const entry of book.entries()) this.render(entry);
    book.subscribe((entry) => this.render(entry));
  }

  /** Bring one turn's element up to date: add it, update it, or remove it once the book has forgotten it. */
  render(entry: TurnEntry): void {
    this.#removeForgotten();
    if (this.#book.get(entry.turnId) === undefined) return;
    let li = this.#elements.get(entry.turnId);
    if (li === undefined) {
      li = turnElement(entry);
      this.#elements.set(entry.turnId, li);
      this.#root.append(li);
    }
    const snapshot = entry.stop?.getSnapshot();
    li.dataset["phase"] = entry.phase;
    li.dataset["stopState"] = snapshot?.state ?? "none";
    const items = li.querySelector<HTMLElement>(".items") as HTMLElement;
    for (const item of entry.items.values()) renderItem(items, item);
    const outcome = li.querySelector<HTMLElement>(".outcome") as HTMLElement;
    const { text, tone } = outcomeOf(entry, snapshot);
    outcome.textContent = text;
    outcome.dataset["tone"] = tone;
  }

  #removeForgotten(): void {
    for (const [turnId, element] of this.#elements) {
      if (this.#book.get(turnId) === undefined) {
        element.remove();
        this.#elements.delete(turnId);
      }
    }
  }
}

function turnElement(entry: TurnEntry): HTMLLIElement {
  const li = document.createElement("li");
  li.className = "turn";
  li.dataset["turnId"] = entry.turnId;
  const prompt = document.createElement("p");
  prompt.className = "prompt";
  prompt.textContent = entry.prompt ?? "(a turn this page did not start)";
  const items = document.createElement("div");
  items.className = "items";
  const outcome = document.createElement("p");
  outcome.className = "outcome";
  li.append(prompt, items, outcome);
  return li;
}

function renderItem(container: HTMLElement, item: Item): void {
  let element = container.querySelector<HTMLElement>(`[data-item-id="${CSS.escape(item.itemId)}"]`);
  if (element === null) {
    element = item.kind === "toolCall" ? toolElement(item) : document.createElement("p");
    element.dataset["itemId"] = item.itemId;
    element.classList.add(item.kind === "toolCall" ? "tool" : item.kind);
    container.append(element);
  }
  element.dataset["status"] = item.status;
  if (item.kind === "toolCall") element.dataset["approval"] = item.approval ?? "none";
  if (item.kind !== "toolCall") {
    element.textContent = item.text;
    if (item.interrupted === true) element.append(tag("interrupted"));
    return;
  }
  const status = element.querySelector<HTMLElement>(".item-status") as HTMLElement;
  status.textContent = toolStatus(item);
  const output = element.querySelector<HTMLPreElement>(".tool-output") as HTMLPreElement;
  // Follow the output while the reader is at its end; leave it alone while they scroll back.
  const following = output.scrollTop + output.clientHeight >= output.scrollHeight - 4;
  if (output.textContent !== item.visibleOutput) output.textContent = item.visibleOutput;
  if (following) output.scrollTop = output.scrollHeight;
}

function toolElement(item: ToolCallItem): HTMLElement {
  const figure = document.createElement("figure");
  const caption = document.createElement("figcaption");
  const command = document.createElement("code");
  command.textContent = `${item.tool}: ${commandOf(item)}`;
  const status = document.createElement("span");
  status.className = "item-status";
  caption.append(command, " ", status);
  const output = document.createElement("pre");
  output.className = "tool-output";
  output.tabIndex = 0; // scrollable with the keyboard
  output.setAttribute("aria-label", `output of ${item.tool}`);
  figure.append(caption, output);
  return figure;
}

/** The first line of a shell call's command (often a `# what it does` comment), else the arguments as sent. */
function commandOf(item: ToolCallItem): string {
  try {
    const args: unknown = JSON.parse(item.args);
    if (typeof args === "object" && args !== null && typeof (args as Record<string, unknown>)["command"] === "string") {
      const command = ((args as Record<string, string>)["command"] as string).trim();
      const first = command.split("\n", 1)[0] as string;
      return first.length > 100 || first !== command ? `${first.slice(0, 99)}…` : first;
    }
  } catch {
    // not JSON: show it as it is
  }
  return item.args;
}

function toolStatus(item: ToolCallItem): string {
  const cut = item.truncated ? " (output cut)" : "";
  if (item.status === "inProgress")
    return item.approval === "pending" ? "waiting for your approval…" : `${item.approval === "approved" ? "approved, " : ""}running…${cut}`;
  const approval = item.approval === "approved" ? "approved, " : "";
  return `${approval}${item.status}${item.failureReason === undefined ? "" : `: ${item.failureReason}`}${cut}`;
}

function tag(text: string): HTMLElement {
  const span = document.createElement("span");
  span.className = "tag";
  span.textContent = text;
  return span;
}

function outcomeOf(entry: TurnEntry, snapshot: StopSnapshot | undefined): { text: string; tone: string } {
  if (entry.terminal !== undefined) return { text: `${entry.terminal.terminal}: ${entry.terminal.reason}`, tone: entry.terminal.terminal };
  if (snapshot?.state === "failed") return { text: `failed: ${describeError(snapshot.error)}`, tone: "failed" };
  if (snapshot?.state === "stopping") return { text: "Stopping…", tone: "stopping" };
  return { text: entry.phase === "starting" ? "starting…" : entry.phase, tone: entry.phase };
}
