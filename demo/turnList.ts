/**
 * The list of turns: for each, the prompt, its items as they stream (message text, reasoning, a
 * tool call's live output), and how it ended (its terminal and reason, or the error that ended
 * its Stop button). One element per turn and per item, updated in place, so live output does not
 * flicker and a reader's scroll position in a tool's output is kept.
 *
 * An item's text (a message's or reasoning's `text`, a tool call's `visibleOutput`) is a
 * {@link SegmentedText}. An append (MSP 2.0's `item/delta`) is added at its end: the work per
 * delta stays that of the delta, however long the text grows. Any other change (an item started,
 * patched or completed, or one whose previous revision this view did not show) renders the item
 * whole, which leaves the text's nodes alone when the text is the same.
 */
import type { Item, ToolCallItem } from "@muse-code/sdk";
import type { StopSnapshot } from "@muse-code/sdk/ui";
import { describeError } from "./describeError.js";
import { SegmentedText } from "./segmentedText.js";
import type { ItemAppend, TurnBook, TurnEntry } from "./turnBook.js";

/** What an item's element shows: the item it rendered last, whether that was held only in part, and its text. */
interface Shown {
  item: Item;
  cut: boolean;
  readonly text: SegmentedText;
  /** The element the text is in (a tool's output panel scrolls). */
  readonly box: HTMLElement;
}

/** Renders every turn of a {@link TurnBook} into the turns list, updating elements in place. */
export class TurnList {
  readonly #root: HTMLOListElement;
  readonly #book: TurnBook;
  readonly #elements = new Map<string, HTMLLIElement>();
  /** Each item's element, and what it shows. */
  readonly #shown = new WeakMap<HTMLElement, Shown>();

  constructor(root: HTMLOListElement, book: TurnBook) {
    this.#root = root;
    this.#book = book;
    for (const entry of book.entries()) this.render(entry);
    book.subscribe((entry, append) => this.render(entry, append));
  }

  /**
   * Bring one turn's element up to date: add it, update it, or remove it once the book has
   * forgotten it. With `append`, that item's text gets the append, when the element shows the
   * item's previous revision; every other item whose revision changed is rendered whole.
   */
  render(entry: TurnEntry, append?: ItemAppend): void {
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
    if (append === undefined || !this.#append(items, append))
      for (const item of entry.items.values()) this.#renderItem(items, item, entry.cut.has(item.itemId));
    const outcome = li.querySelector<HTMLElement>(".outcome") as HTMLElement;
    const { text, tone } = outcomeOf(entry, snapshot);
    outcome.textContent = text;
    outcome.dataset["tone"] = tone;
  }

  /** Add `append` to the text its item's element shows; false (nothing done) when that is not the item's previous revision in whole. */
  #append(container: HTMLElement, { item, field, append }: ItemAppend): boolean {
    const element = itemElement(container, item.itemId);
    const shown = element === null ? undefined : this.#shown.get(element);
    if (element === null || shown === undefined || shown.cut || shown.item.revision !== item.revision - 1 || field !== textField(item)) return false;
    if (item.kind === "toolCall") {
      // Follow the output while the reader is at its end; leave it alone while they scroll back.
      const following = isAtEnd(shown.box);
      shown.text.append(append);
      if (following) shown.box.scrollTop = shown.box.scrollHeight;
    } else {
      shown.text.append(append);
    }
    element.dataset["revision"] = String(item.revision);
    shown.item = item;
    return true;
  }

  /** Render one item whole into its element (made on first sight); an item the element already shows at this revision is left alone. */
  #renderItem(container: HTMLElement, item: Item, cut: boolean): void {
    let element = itemElement(container, item.itemId);
    let shown = element === null ? undefined : this.#shown.get(element);
    if (shown !== undefined && shown.item === item && shown.cut === cut) return;
    if (element === null || shown === undefined) {
      const box = document.createElement(item.kind === "toolCall" ? "pre" : "span");
      element = item.kind === "toolCall" ? toolElement(item, box) : document.createElement("p");
      if (item.kind !== "toolCall") element.append(box);
      box.classList.add(item.kind === "toolCall" ? "tool-output" : "text");
      element.dataset["itemId"] = item.itemId;
      element.classList.add(item.kind === "toolCall" ? "tool" : item.kind);
      container.append(element);
      shown = { item, cut, text: new SegmentedText(box), box };
      this.#shown.set(element, shown);
    }
    shown.item = item;
    shown.cut = cut;
    element.dataset["status"] = item.status;
    element.dataset["revision"] = String(item.revision);
    if (cut) element.dataset["cut"] = "true";
    else delete element.dataset["cut"];
    if (item.kind === "toolCall") element.dataset["approval"] = item.approval ?? "none";
    if (item.kind !== "toolCall") {
      shown.text.set(item.text);
      // The text stays (appends go on landing in it); the tags after it are made again.
      while (shown.box.nextSibling !== null) shown.box.nextSibling.remove();
      if (item.interrupted === true) element.append(tag("interrupted"));
      if (cut) element.append(tag(CUT_TAG));
      return;
    }
    const status = element.querySelector<HTMLElement>(".item-status") as HTMLElement;
    status.textContent = toolStatus(item) + (cut ? ` (${CUT_TAG})` : "");
    const following = isAtEnd(shown.box);
    shown.text.set(item.visibleOutput);
    if (following) shown.box.scrollTop = shown.box.scrollHeight;
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

/** Shown beside a text the page kept only in part across a reload. */
const CUT_TAG = "cut: only the start was kept across the reload";

function itemElement(container: HTMLElement, itemId: string): HTMLElement | null {
  return container.querySelector<HTMLElement>(`[data-item-id="${CSS.escape(itemId)}"]`);
}

/** A scrolling panel scrolled to its end (or not scrollable). */
function isAtEnd(box: HTMLElement): boolean {
  return box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
}

/** The field of an item that item/delta appends to. */
function textField(item: Item): "text" | "visibleOutput" {
  return item.kind === "toolCall" ? "visibleOutput" : "text";
}

function toolElement(item: ToolCallItem, output: HTMLElement): HTMLElement {
  const figure = document.createElement("figure");
  const caption = document.createElement("figcaption");
  const command = document.createElement("code");
  command.textContent = `${item.tool}: ${commandOf(item)}`;
  const status = document.createElement("span");
  status.className = "item-status";
  caption.append(command, " ", status);
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
