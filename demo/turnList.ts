/**
 * The list of turns: for each, the prompt, its items as they stream (message text, reasoning, a
 * tool call's live output), and where it is: running, queued, "Stopping…", "reconnecting…" while
 * the connection is down (the host may still be running it), and how it ended: the host's own
 * terminal in `describeTerminal`'s words ("you stopped it", "stopped by policy: …", "the host shut
 * down", …) and the host's reason, with its token usage in `describeUsage`'s words when the host sent it. One element per turn and per item, updated in place ({@link ItemList}), so live output
 * does not flicker and a reader's scroll position in a tool's output is kept.
 *
 * Subagents (issue 23): under each delegating tool call, the child turn it started, nested
 * ({@link SubagentLists}, from the turn's `subagents` in the snapshot); while a turn with
 * subagents is stopping, its last line counts them down from its `subagentProgress` in
 * `describeTreeProgress`'s words ("stopping 3 of 5 subagents…") until its own terminal.
 *
 * It renders {@link SessionTurn}s from the session's snapshots. Every snapshot is immutable and
 * a turn or item that did not change is the same object in the next one, so a render skips what
 * did not move; the subagents below a turn are rendered again when they moved (their items are
 * not in the snapshot: `SubagentItems` keeps them).
 */
import type { SessionTurn } from "@muse-code/sdk/session";
import { describeEnding, describeTreeProgress, type TreeProgress } from "@muse-code/sdk/ui";
import { ItemList } from "./itemList.js";
import { SubagentLists } from "./subagentList.js";
import type { SubagentTree } from "./subagents.js";

/** One turn's element and views. */
interface Entry {
  li: HTMLLIElement;
  turn: SessionTurn | undefined;
  items: ItemList;
  subagents: SubagentLists;
  /** The outcome shown last (its text changes with the subagents' progress too). */
  outcome: string;
}

/** Renders the session's turns into the turns list, updating elements in place. */
export class TurnList {
  readonly #root: HTMLOListElement;
  readonly #elements = new Map<string, Entry>();

  constructor(root: HTMLOListElement) {
    this.#root = root;
  }

  /** Bring the list up to date with `turns` (and their subagents, as `tree` shows them): add, update or remove each turn's element. */
  render(turns: readonly SessionTurn[], tree: SubagentTree): void {
    const ids = new Set(turns.map((turn) => turn.turnId));
    for (const [turnId, { li }] of this.#elements) {
      if (ids.has(turnId)) continue;
      li.remove();
      this.#elements.delete(turnId);
    }
    for (const turn of turns) this.#renderTurn(turn, tree);
  }

  #renderTurn(turn: SessionTurn, tree: SubagentTree): void {
    let entry = this.#elements.get(turn.turnId);
    if (entry === undefined) {
      const li = turnElement(turn);
      const items = new ItemList(li.querySelector<HTMLElement>(".items") as HTMLElement);
      entry = { li, turn: undefined, items, subagents: new SubagentLists(items), outcome: "" };
      this.#elements.set(turn.turnId, entry);
      this.#root.append(entry.li);
    }
    const { li } = entry;
    if (entry.turn !== turn) {
      entry.turn = turn;
      li.dataset["phase"] = turn.phase;
      li.dataset["stopRequested"] = String(turn.stopRequested);
      entry.items.render(turn.items);
    }
    entry.subagents.render(turn.items, tree);
    const { text, tone } = outcomeOf(turn);
    if (entry.outcome === `${tone}\u0000${text}`) return;
    entry.outcome = `${tone}\u0000${text}`;
    const outcome = li.querySelector<HTMLElement>(":scope > .outcome") as HTMLElement;
    outcome.textContent = text;
    outcome.dataset["tone"] = tone;
  }
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

/**
 * What the turn's last line says. Only the host's own terminal ends a turn, and it reads as the
 * SDK words it (`describeEnding`, as `muse run` prints it), so a user's Stop, a policy stop and a
 * shutdown never look alike. While the
 * connection is down an unended turn reads "reconnecting…" (it may still be running), and a turn
 * the session gave up on reads "unknown" with why: never "failed" unless the host said so. A turn
 * with subagents (its `subagentProgress`, its descendants' counts) says how many run: "2 of 3
 * subagents running" while it runs, "stopping 2 of 3 subagents…" while it stops, until its own terminal.
 */
export function outcomeOf(turn: SessionTurn): { text: string; tone: string } {
  const { terminal, subagentProgress: progress } = turn;
  if (terminal !== undefined) {
    return { text: describeEnding(terminal), tone: terminal.terminal };
  }
  switch (turn.phase) {
    case "unknown":
      return { text: `unknown: ${turn.unknownReason ?? "the session stopped before the turn's end arrived"}`, tone: "unknown" };
    case "stopping":
      return { text: stoppingWords(progress), tone: "stopping" };
    case "reconnecting":
      return { text: "reconnecting…", tone: "reconnecting" };
    case "starting":
      return { text: "starting…", tone: "starting" };
    case "running":
      return { text: progress.running === 0 ? "running" : `running: ${describeTreeProgress(progress)}`, tone: "running" };
    default:
      return { text: turn.phase, tone: turn.phase };
  }
}

/**
 * What a stopping turn (its Stop pressed, its own terminal not here yet) says: "stopping 3 of 5
 * subagents…" while any of its subagents still runs, else "Stopping…".
 */
export function stoppingWords(progress: TreeProgress | undefined): string {
  return progress === undefined || progress.running === 0 ? "Stopping…" : describeTreeProgress(progress, { stopping: true });
}
