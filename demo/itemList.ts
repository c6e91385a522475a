/**
 * The items of one turn (a session's turn, or a subagent's): message text, reasoning, a tool
 * call's live output, each in one element updated in place, so live output does not flicker and
 * a reader's scroll position in a tool's output is kept. An item's text (a message's or
 * reasoning's `text`, a tool call's `visibleOutput`) is a {@link SegmentedText}: when the new
 * text starts with the text shown (MSP 2.0's `item/delta` appends), only the rest is appended, so
 * the work per delta stays that of the delta however long the text grows; any other change
 * renders the text whole. An item that is the same object as the one shown last is skipped.
 */
import type { Item, ToolCallItem } from "@muse-code/sdk";
import { SegmentedText } from "./segmentedText.js";

/** What an item's element shows: the item it rendered last, and its text. */
interface Shown {
  item: Item;
  readonly text: SegmentedText;
  /** The element the text is in (a tool's output panel scrolls). */
  readonly box: HTMLElement;
}

/** Renders a turn's items into one container, each in its own element (a direct child of it). */
export class ItemList {
  readonly #container: HTMLElement;
  readonly #elements = new Map<string, HTMLElement>();
  /** Each item's element, and what it shows. */
  readonly #shown = new WeakMap<HTMLElement, Shown>();

  constructor(container: HTMLElement) {
    this.#container = container;
  }

  /** The element of `itemId`, once rendered. */
  elementOf(itemId: string): HTMLElement | undefined {
    return this.#elements.get(itemId);
  }

  /** Bring every item's element up to date (made on first sight). */
  render(items: readonly Item[]): void {
    for (const item of items) this.#renderItem(item);
  }

  /** Render one item into its element: its new text appended when it follows what is shown, else whole. */
  #renderItem(item: Item): void {
    let element = this.#elements.get(item.itemId);
    let shown = element === undefined ? undefined : this.#shown.get(element);
    if (shown !== undefined && shown.item === item) return;
    if (element === undefined || shown === undefined) {
      const box = document.createElement(item.kind === "toolCall" ? "pre" : "span");
      element = item.kind === "toolCall" ? toolElement(item, box) : document.createElement("p");
      if (item.kind !== "toolCall") element.append(box);
      box.classList.add(item.kind === "toolCall" ? "tool-output" : "text");
      element.dataset["itemId"] = item.itemId;
      element.classList.add(item.kind === "toolCall" ? "tool" : item.kind);
      this.#container.append(element);
      this.#elements.set(item.itemId, element);
      shown = { item, text: new SegmentedText(box), box };
      this.#shown.set(element, shown);
      shown.text.set(textOf(item));
    } else {
      const before = textOf(shown.item);
      const after = textOf(item);
      // Follow a tool's output while the reader is at its end; leave it alone while they scroll back.
      const following = item.kind === "toolCall" && isAtEnd(shown.box);
      if (after.length > before.length && after.startsWith(before)) shown.text.append(after.slice(before.length));
      else shown.text.set(after);
      if (following) shown.box.scrollTop = shown.box.scrollHeight;
    }
    shown.item = item;
    element.dataset["status"] = item.status;
    element.dataset["revision"] = String(item.revision);
    if (item.kind === "toolCall") {
      element.dataset["approval"] = item.approval ?? "none";
      (element.querySelector<HTMLElement>(".item-status") as HTMLElement).textContent = toolStatus(item);
      return;
    }
    // The text stays (appends go on landing in it); the tags after it are made again.
    while (shown.box.nextSibling !== null) shown.box.nextSibling.remove();
    if (item.interrupted === true) element.append(tag("interrupted"));
    // Steering (MSP 2.1): the user's own words in the turn, and what became of them.
    if (item.kind === "message" && item.author === "user") {
      element.dataset["author"] = "user";
      element.append(tag(steeringState(item.status, item.carriedOver === true)));
    }
  }
}

/** What became of a steering message: waiting for the model, heard, carried into the next turn, or discarded. */
function steeringState(status: string, carriedOver: boolean): string {
  if (status === "inProgress") return "steering: waiting for the model";
  if (status === "completed") return "steering: heard";
  if (carriedOver) return "steering: carried into the next turn";
  return status === "failed" ? "steering: lost (the host restarted)" : "steering: discarded";
}

/** A scrolling panel scrolled to its end (or not scrollable). */
function isAtEnd(box: HTMLElement): boolean {
  return box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
}

/** The text an item shows: a message's or reasoning's `text`, a tool call's `visibleOutput`. */
function textOf(item: Item): string {
  return item.kind === "toolCall" ? item.visibleOutput : item.text;
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
