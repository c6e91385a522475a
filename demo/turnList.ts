/**
 * The list of turns: for each, the prompt, its items as they stream (message text, reasoning, a
 * tool call's live output), and where it is: running, queued, "Stopping…", "reconnecting…" while
 * the connection is down (the host may still be running it), and how it ended: the host's own
 * terminal in `describeTerminal`'s words ("you stopped it", "stopped by policy: …", "the host shut
 * down", …) and the host's reason, with its token usage in `describeUsage`'s words when the host sent it. One element per turn and per item, updated in place, so live output
 * does not flicker and a reader's scroll position in a tool's output is kept.
 *
 * It renders {@link SessionTurn}s from the session's snapshots. Every snapshot is immutable and
 * a turn or item that did not change is the same object in the next one, so a render skips what
 * did not move. An item's text (a message's or reasoning's `text`, a tool call's
 * `visibleOutput`) is a {@link SegmentedText}: when the new text starts with the text shown (MSP
 * 2.0's `item/delta` appends), only the rest is appended, so the work per delta stays that of the
 * delta however long the text grows; any other change renders the text whole.
 */
import type { Item, ToolCallItem } from "@muse-code/sdk";
import type { SessionTurn } from "@muse-code/sdk/session";
import { describeEnding } from "@muse-code/sdk/ui";
import { SegmentedText } from "./segmentedText.js";

/** What an item's element shows: the item it rendered last, and its text. */
interface Shown {
  item: Item;
  readonly text: SegmentedText;
  /** The element the text is in (a tool's output panel scrolls). */
  readonly box: HTMLElement;
}

/** Renders the session's turns into the turns list, updating elements in place. */
export class TurnList {
  readonly #root: HTMLOListElement;
  readonly #elements = new Map<string, { li: HTMLLIElement; turn: SessionTurn | undefined }>();
  /** Each item's element, and what it shows. */
  readonly #shown = new WeakMap<HTMLElement, Shown>();

  constructor(root: HTMLOListElement) {
    this.#root = root;
  }

  /** Bring the list up to date with `turns`: add, update or remove each turn's element. */
  render(turns: readonly SessionTurn[]): void {
    const ids = new Set(turns.map((turn) => turn.turnId));
    for (const [turnId, { li }] of this.#elements) {
      if (ids.has(turnId)) continue;
      li.remove();
      this.#elements.delete(turnId);
    }
    for (const turn of turns) this.#renderTurn(turn);
  }

  #renderTurn(turn: SessionTurn): void {
    let entry = this.#elements.get(turn.turnId);
    if (entry === undefined) {
      entry = { li: turnElement(turn), turn: undefined };
      this.#elements.set(turn.turnId, entry);
      this.#root.append(entry.li);
    }
    if (entry.turn === turn) return; // the same object: nothing changed
    entry.turn = turn;
    const { li } = entry;
    li.dataset["phase"] = turn.phase;
    li.dataset["stopRequested"] = String(turn.stopRequested);
    const items = li.querySelector<HTMLElement>(".items") as HTMLElement;
    for (const item of turn.items) this.#renderItem(items, item);
    const outcome = li.querySelector<HTMLElement>(".outcome") as HTMLElement;
    const { text, tone } = outcomeOf(turn);
    outcome.textContent = text;
    outcome.dataset["tone"] = tone;
  }

  /** Render one item into its element (made on first sight): its new text appended when it follows what is shown, else whole. */
  #renderItem(container: HTMLElement, item: Item): void {
    let element = itemElement(container, item.itemId);
    let shown = element === null ? undefined : this.#shown.get(element);
    if (shown !== undefined && shown.item === item) return;
    if (element === null || shown === undefined) {
      const box = document.createElement(item.kind === "toolCall" ? "pre" : "span");
      element = item.kind === "toolCall" ? toolElement(item, box) : document.createElement("p");
      if (item.kind !== "toolCall") element.append(box);
      box.classList.add(item.kind === "toolCall" ? "tool-output" : "text");
      element.dataset["itemId"] = item.itemId;
      element.classList.add(item.kind === "toolCall" ? "tool" : item.kind);
      container.append(element);
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

/** The prompt a turn was started with, when this session started it. */
export function promptOf(turn: SessionTurn): string | undefined {
  const text = (turn.input ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
  return text === "" ? undefined : text;
}

function turnElement(turn: SessionTurn): HTMLLIElement {
  const li = document.createElement("li");
  li.className = "turn";
  li.dataset["turnId"] = turn.turnId;
  const prompt = document.createElement("p");
  prompt.className = "prompt";
  prompt.textContent = promptOf(turn) ?? "(a turn this page did not start)";
  const items = document.createElement("div");
  items.className = "items";
  const outcome = document.createElement("p");
  outcome.className = "outcome";
  li.append(prompt, items, outcome);
  return li;
}

function itemElement(container: HTMLElement, itemId: string): HTMLElement | null {
  return container.querySelector<HTMLElement>(`[data-item-id="${CSS.escape(itemId)}"]`);
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

/**
 * What the turn's last line says. Only the host's own terminal ends a turn, and it reads as the
 * SDK words it (`describeEnding`, as `muse run` prints it), so a user's Stop, a policy stop and a
 * shutdown never look alike. While the
 * connection is down an unended turn reads "reconnecting…" (it may still be running), and a turn
 * the session gave up on reads "unknown" with why: never "failed" unless the host said so.
 */
export function outcomeOf(turn: SessionTurn): { text: string; tone: string } {
  const { terminal } = turn;
  if (terminal !== undefined) {
    return { text: describeEnding(terminal), tone: terminal.terminal };
  }
  switch (turn.phase) {
    case "unknown":
      return { text: `unknown: ${turn.unknownReason ?? "the session stopped before the turn's end arrived"}`, tone: "unknown" };
    case "stopping":
      return { text: "Stopping…", tone: "stopping" };
    case "reconnecting":
      return { text: "reconnecting…", tone: "reconnecting" };
    case "starting":
      return { text: "starting…", tone: "starting" };
    default:
      return { text: turn.phase, tone: turn.phase };
  }
}
