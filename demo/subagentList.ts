/**
 * Subagent turns (issue 23) nested under the tool calls that delegated them: inside a `task`
 * call's element, a list (`<ol class="subagents">`, labelled with the agent's name) holds the child
 * turn it started: the agent and what it was asked, its own items as they stream (through an
 * {@link ItemList}), its state, and, under its own delegating calls, its children, and so on down.
 *
 * A child turn's state is the session's snapshot's (`SessionTurn.subagents`, kept across a reload):
 * "starting…" (linked, not started yet), "running", or its own terminal in `describeEnding`'s
 * words ("completed", "stopped because its parent turn stopped (…)", "failed: …"): never a
 * terminal the host did not send. A link heard a moment before the snapshot's tree lists its child
 * reads "starting…"; a child whose delegating call ended without its terminal being heard (its
 * session no longer followed: past `limits.subagentSessions`) says so.
 */
import type { Item, ToolCallItem } from "@muse-code/sdk";
import { describeEnding, type TreeTurn } from "@muse-code/sdk/ui";
import { ItemList } from "./itemList.js";
import type { SubagentTree } from "./subagents.js";

/** The subagent lists under the delegating calls of one turn's items. */
export class SubagentLists {
  readonly #items: ItemList;
  readonly #lists = new Map<string, SubagentList>();

  /** @param items - The turn's rendered items: the delegating calls' elements hold the lists. */
  constructor(items: ItemList) {
    this.#items = items;
  }

  /** Render the child turn under each of `items`' delegating calls (after `items` were rendered), as `tree` shows it. */
  render(items: readonly Item[], tree: SubagentTree): void {
    for (const item of items) {
      if (item.kind !== "toolCall" || item.subagent === undefined) continue;
      let list = this.#lists.get(item.itemId);
      if (list === undefined) {
        const call = this.#items.elementOf(item.itemId);
        if (call === undefined) continue;
        list = new SubagentList(call);
        this.#lists.set(item.itemId, list);
      }
      list.render(item, tree);
    }
  }
}

/** The child turn one delegating call started, in a labelled list inside the call's element. */
class SubagentList {
  readonly #list: HTMLOListElement;
  readonly #entry: HTMLLIElement;
  readonly #title: HTMLElement;
  readonly #state: HTMLElement;
  readonly #items: ItemList;
  readonly #below: SubagentLists;

  constructor(call: HTMLElement) {
    this.#list = document.createElement("ol");
    this.#list.className = "subagents";
    this.#entry = document.createElement("li");
    this.#entry.className = "subagent";
    this.#title = document.createElement("p");
    this.#title.className = "subagent-title";
    const items = document.createElement("div");
    items.className = "items";
    this.#state = document.createElement("p");
    this.#state.className = "subagent-state";
    this.#entry.append(this.#title, items, this.#state);
    this.#list.append(this.#entry);
    // Under the call's caption, before its output (which becomes the child's last message).
    const caption = call.querySelector(":scope > figcaption");
    if (caption === null) call.append(this.#list);
    else caption.after(this.#list);
    this.#items = new ItemList(items);
    this.#below = new SubagentLists(this.#items);
  }

  render(call: ToolCallItem, tree: SubagentTree): void {
    const turnId = (call.subagent as { turnId: string }).turnId;
    const task = tree.taskOf(turnId);
    const turn = tree.turn(turnId);
    const agent = task?.agent ?? "subagent";
    const { text, state } = stateOf(turn, call);
    const entry = this.#entry;
    if (entry.dataset["turnId"] !== turnId) {
      entry.dataset["turnId"] = turnId;
      this.#title.id = `subagent-${turnId}`;
      entry.setAttribute("aria-labelledby", this.#title.id);
    }
    const label = `subagent ${agent}`;
    if (this.#list.getAttribute("aria-label") !== label) this.#list.setAttribute("aria-label", label);
    entry.dataset["agent"] = agent;
    entry.dataset["depth"] = String(turn?.depth ?? "");
    entry.dataset["state"] = state;
    const title = `Subagent ${agent}${task === undefined || task.prompt === "" ? "" : `: “${task.prompt}”`}`;
    if (this.#title.textContent !== title) this.#title.textContent = title;
    if (this.#state.textContent !== text) this.#state.textContent = text;
    this.#state.dataset["tone"] = state;
    const items = tree.itemsOf(turnId);
    this.#items.render(items);
    this.#below.render(items, tree);
  }
}

/** A child turn's state (for `data-state` and styles) and its words. */
function stateOf(turn: TreeTurn | undefined, call: ToolCallItem): { state: string; text: string } {
  if (turn?.terminal !== undefined) return { state: turn.terminal.terminal, text: describeEnding(turn.terminal) };
  if (call.status !== "inProgress") return { state: "unheard", text: `its end was not heard on this page (its call is ${call.status})` };
  // The link is in the turn's items a moment before the snapshot's tree lists the child it names.
  if (turn === undefined || turn.state === "linked") return { state: "starting", text: "starting…" };
  return { state: "running", text: "running" };
}
