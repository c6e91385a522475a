/**
 * TurnTree: the UI's view of a subagent tree, folded from the notification stream
 * alone: each turn's child turns (and theirs), each one's terminal as it arrives, and how many
 * descendants have started and ended, for "stopping 3 of 5 subagents…".
 */
import { MspError } from "../errors.js";
import { isObject, problemWithNotification, problemWithSubagentLinks } from "@muse-code/protocol/guards.js";
import { Notifications } from "@muse-code/protocol/methods.js";
import type { ParentTurnLink, TurnCompletedParams } from "@muse-code/protocol/types.js";

/** How many turns a {@link TurnTree} tracks by default. @unit turns */
const DEFAULT_MAX_TURNS = 1024;

/**
 * Where a turn of a {@link TurnTree} stands: `linked` (a delegating tool call named it; its
 * `turn/started` has not come), `running` (started, or heard of through its items or children),
 * `ended` (its own `turn/completed` came).
 *
 * @example
 * ```ts
 * const badge: Record<TreeTurnState, string> = { linked: "starting", running: "running", ended: "done" };
 * ```
 */
export type TreeTurnState = "linked" | "running" | "ended";

/**
 * One turn of a {@link TurnTree}, as the stream has told of it so far.
 *
 * @example
 * ```ts
 * import { TurnTree, describeTerminal } from "@muse-code/sdk/ui";
 *
 * const tree = new TurnTree();
 * client.onNotification((n) => tree.observe(n));
 * const children: TreeTurn[] = tree.childrenOf(turnId);
 * for (const child of children) {
 *   console.log(`${"  ".repeat(child.depth)}${child.turnId}: ${child.terminal === undefined ? child.state : describeTerminal(child.terminal)}`);
 * }
 * ```
 */
export interface TreeTurn {
  turnId: string;
  /** The session the turn runs in, once a link or one of its notifications named it. */
  sessionId?: string;
  /** On a child turn: the turn and delegating tool-call item above it. */
  parent?: ParentTurnLink;
  /** @unit levels below the top-level turn: 0 for a top-level turn (or one whose parent the tree never heard of), 1 for a child, … */
  depth: number;
  state: TreeTurnState;
  /** Its `turn/completed`: terminal, reason, cause and usage, once it came. */
  terminal?: Pick<TurnCompletedParams, "terminal" | "reason" | "cause" | "usage">;
  /** Its child turns' ids, in the order they were linked or started. */
  children: readonly string[];
}

/**
 * The descendants of one turn (children, grandchildren, …; not the turn itself) a
 * {@link TurnTree} knows of: how many were linked or started, and how many of those ended.
 *
 * @example
 * ```ts
 * const tree = new TurnTree();
 * const { started, ended, running }: TreeProgress = tree.progressOf(turnId);
 * console.log(`${ended} of ${started} subagents ended, ${running} still running`);
 * ```
 */
export interface TreeProgress {
  /** Descendants linked or started. @unit turns */
  started: number;
  /**
   * Of those, the ones not running: whose own `turn/completed` came, or (counted as ended without
   * a terminal, their `state` left as it was) whose delegating tool call reached a final status,
   * or that sit below a turn that ended (invariant 7: nothing runs below an ended turn; e.g. a
   * child linked whose start failed). @unit turns
   */
  ended: number;
  /** `started - ended`. @unit turns */
  running: number;
}

/**
 * Options of {@link TurnTree}.
 *
 * @example
 * ```ts
 * const tree = new TurnTree({ maxTurns: 256 });
 * ```
 */
export interface TurnTreeOptions {
  /**
   * The most turns the tree holds. Past it, whole trees are forgotten, oldest first: trees whose
   * every turn ended first, then running ones (other than the tree just grown). A single tree
   * larger than this keeps its first `maxTurns` turns; later turns of it are not tracked. A
   * notification about a forgotten turn starts it over, as a new tree. Each turn forgotten, and
   * each notification of a turn not tracked, counts in {@link TurnTree.forgotten}. A positive
   * integer.
   * @defaultValue 1024
   * @unit turns
   */
  maxTurns?: number;
}

interface Node {
  turnId: string;
  sessionId?: string;
  parent?: ParentTurnLink;
  depth: number;
  state: TreeTurnState;
  terminal?: TreeTurn["terminal"];
  children: string[];
  /** Its delegating tool call reached a final status: it is not running, even without a terminal of its own. */
  callDone?: boolean;
}

/**
 * A pure fold of MSP notifications into subagent trees, for a UI: feed it every
 * notification (`observe`), then ask, for a turn, its child turns (`childrenOf`, `descendantsOf`),
 * each one's state and terminal (`turn`), and its descendants' counts (`progressOf`). It reads
 * `turn/started` (`parent`, `depth`), the `subagent` link of a tool call's `item/started`,
 * `item/updated` (a wire patch or the SDK's whole item) or `item/completed`, and `turn/completed`;
 * it ignores every other notification. A turn's own terminal comes after every child's
 * (invariant 7), so when a turn has ended, `progressOf` says every descendant ended too.
 * Browser-safe; bounded by `maxTurns`.
 *
 * @example
 * ```ts
 * import { TurnTree, describeTreeProgress } from "@muse-code/sdk/ui";
 *
 * const tree = new TurnTree();
 * client.onNotification((n) => {
 *   if (tree.observe(n) && turn.turnId !== undefined) status.textContent = describeTreeProgress(tree.progressOf(turn.turnId), { stopping: true });
 * });
 * await turn.cancel(); // "stopping 3 of 5 subagents…", then "all 5 subagents ended"
 * ```
 */
export class TurnTree {
  readonly #maxTurns: number;
  readonly #turns = new Map<string, Node>();
  /** Top-level turns (or turns whose parent the tree never heard of), oldest first. */
  readonly #roots = new Set<string>();
  #forgotten = 0;

  /**
   * @param options - `maxTurns`, the cap on turns held (default 1024).
   * @throws RangeError when `maxTurns` is not a positive integer.
   *
   * @example
   * ```ts
   * const tree = new TurnTree({ maxTurns: 512 });
   * ```
   */
  constructor(options: TurnTreeOptions = {}) {
    const max = options.maxTurns ?? DEFAULT_MAX_TURNS;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`TurnTree: maxTurns must be a positive integer, got ${String(max)}`);
    this.#maxTurns = max;
  }

  /**
   * How many turns the tree holds now. At most `maxTurns`.
   * @unit turns
   *
   * @example
   * ```ts
   * const tree = new TurnTree({ maxTurns: 64 });
   * console.log(`${tree.size} turns tracked, ${tree.forgotten} forgotten`);
   * ```
   */
  get size(): number {
    return this.#turns.size;
  }

  /**
   * How many turns were forgotten (evicted with their tree), plus how many notifications of turns
   * found no room (a tree larger than `maxTurns`), to stay within `maxTurns`.
   * @unit turns
   *
   * @example
   * ```ts
   * const tree = new TurnTree();
   * if (tree.forgotten > 0) console.warn("some old subagent trees were dropped from view");
   * ```
   */
  get forgotten(): number {
    return this.#forgotten;
  }

  /**
   * Fold one notification in. Returns true when it changed the tree (a turn linked, started or
   * ended), false when it is not about the tree (e.g. `item/delta`, a tool call with no `subagent`)
   * or changed nothing.
   *
   * @param notification - A notification as `client.onNotification` gives it: `method` and `params`.
   * @returns Whether the tree changed.
   * @throws MspError of kind `protocol` when a notification it reads is malformed (its params, or
   *   a `parent` or `subagent` link); the tree is then unchanged.
   *
   * @example
   * ```ts
   * const tree = new TurnTree();
   * client.onNotification((n) => {
   *   if (tree.observe(n)) console.log(describeTreeProgress(tree.progressOf(turnId)));
   * });
   * ```
   */
  observe(notification: { method: string; params?: unknown }): boolean {
    const { method, params } = notification;
    const item = method === Notifications.itemStarted || method === Notifications.itemUpdated || method === Notifications.itemCompleted;
    if (method !== Notifications.turnStarted && method !== Notifications.turnCompleted && !item) return false;
    // A whole item (the SDK's item/updated event) is a valid patch: one guard for both.
    const problem = problemWithNotification(item ? Notifications.itemUpdated : method, params) ?? problemWithSubagentLinks(method, params);
    if (problem !== undefined || !isObject(params)) {
      const text = problem ?? "params must be an object";
      throw new MspError("protocol", `TurnTree: ${method}: ${text}`, { problem: `${method}: ${text}` });
    }
    const sessionId = params["sessionId"] as string;
    if (method === Notifications.turnCompleted) return this.#end(params as unknown as TurnCompletedParams);
    if (method === Notifications.turnStarted) return this.#start(params["turnId"] as string, sessionId, params["parent"] as ParentTurnLink | undefined);
    const called = params["item"] as Record<string, unknown>;
    const link = called["subagent"] as { sessionId: string; turnId: string } | undefined;
    const final = typeof called["status"] === "string" && called["status"] !== "inProgress";
    const done = final && this.#callDone(called["turnId"] as string, called["itemId"] as string);
    if (link === undefined) return done;
    const parent = { sessionId, turnId: called["turnId"] as string, itemId: called["itemId"] as string };
    const linked = this.#link(link.turnId, link.sessionId, parent, "linked");
    return (final && this.#callDone(parent.turnId, parent.itemId)) || linked || done;
  }

  /**
   * One turn as the tree knows it, or `undefined` when it never heard of it (or forgot it).
   *
   * @example
   * ```ts
   * const tree = new TurnTree();
   * const child = tree.turn(turnId);
   * if (child?.state === "ended") console.log(child.terminal?.terminal);
   * ```
   */
  turn(turnId: string): TreeTurn | undefined {
    const node = this.#turns.get(turnId);
    return node === undefined ? undefined : snapshot(node);
  }

  /**
   * The child turns of `turnId` (one level), in the order they were linked or started; empty when
   * it has none or the tree does not know it.
   *
   * @example
   * ```ts
   * const tree = new TurnTree();
   * const rows = tree.childrenOf(turnId).map((c) => `${c.turnId} ${c.state}`);
   * ```
   */
  childrenOf(turnId: string): TreeTurn[] {
    const node = this.#turns.get(turnId);
    if (node === undefined) return [];
    return node.children.flatMap((id) => {
      const child = this.#turns.get(id);
      return child === undefined ? [] : [snapshot(child)];
    });
  }

  /**
   * Every turn below `turnId` (children, grandchildren, …), depth-first, each before its own
   * children: the order to render an indented tree in.
   *
   * @example
   * ```ts
   * const tree = new TurnTree();
   * for (const t of tree.descendantsOf(turnId)) console.log(`${"  ".repeat(t.depth)}${t.turnId} ${t.state}`);
   * ```
   */
  descendantsOf(turnId: string): TreeTurn[] {
    return this.#below(turnId).map(snapshot);
  }

  /**
   * How many turns below `turnId` the tree knows of, and how many of them ended (see
   * {@link TreeProgress.ended}: a turn below an ended turn, or whose delegating call is over,
   * counts as ended even without its own terminal, which it is never given): the counts for
   * "stopping 3 of 5 subagents…" ({@link describeTreeProgress}).
   *
   * @example
   * ```ts
   * const tree = new TurnTree();
   * const progressBar = document.createElement("progress");
   * const { started, ended } = tree.progressOf(turnId);
   * progressBar.value = started === 0 ? 1 : ended / started;
   * ```
   */
  progressOf(turnId: string): TreeProgress {
    const below = this.#below(turnId);
    // By invariant 7 nothing runs below an ended turn; a turn whose delegating call is over runs no more either.
    const over = new Set<string>();
    if (this.#turns.get(turnId)?.state === "ended") over.add(turnId);
    for (const n of below) if (n.state === "ended" || n.callDone === true || (n.parent !== undefined && over.has(n.parent.turnId))) over.add(n.turnId);
    const ended = below.filter((n) => over.has(n.turnId)).length;
    return { started: below.length, ended, running: below.length - ended };
  }

  /** The child turn the tool call `itemId` of `turnId` delegated to is not running any more (its call reached a final status). */
  #callDone(turnId: string, itemId: string): boolean {
    let changed = false;
    for (const id of this.#turns.get(turnId)?.children ?? []) {
      const child = this.#turns.get(id);
      if (child === undefined || child.parent?.itemId !== itemId || child.callDone === true) continue;
      child.callDone = true;
      if (child.state !== "ended") changed = true;
    }
    return changed;
  }

  /** The turns below `turnId`, depth-first; each turn visited once (a cycle in bad links cannot loop). */
  #below(turnId: string): Node[] {
    const out: Node[] = [];
    const seen = new Set<string>([turnId]);
    const stack = [...(this.#turns.get(turnId)?.children ?? [])].reverse();
    while (stack.length > 0) {
      const id = stack.pop() as string;
      const node = this.#turns.get(id);
      if (node === undefined || seen.has(id)) continue;
      seen.add(id);
      out.push(node);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as string);
    }
    return out;
  }

  #start(turnId: string, sessionId: string, parent: ParentTurnLink | undefined): boolean {
    if (parent !== undefined) return this.#link(turnId, sessionId, parent, "running");
    const node = this.#ensure(turnId, sessionId);
    if (node === undefined || node.state !== "linked") return false;
    node.state = "running";
    return true;
  }

  #end(params: TurnCompletedParams): boolean {
    const node = this.#ensure(params.turnId, params.sessionId);
    if (node === undefined || node.state === "ended") return false;
    node.state = "ended";
    const { terminal, reason, cause, usage } = params;
    node.terminal = { terminal, reason, ...(cause === undefined ? {} : { cause }), ...(usage === undefined ? {} : { usage }) };
    return true;
  }

  /** A child turn named by a link or its `turn/started`: placed under its parent (heard of now if it was not). */
  #link(turnId: string, sessionId: string, parent: ParentTurnLink, state: "linked" | "running"): boolean {
    const above = this.#ensure(parent.turnId, parent.sessionId);
    if (above === undefined) return false;
    const known = this.#turns.get(turnId);
    if (known !== undefined && known.parent !== undefined) {
      const started = state === "running" && known.state === "linked";
      if (started) known.state = "running";
      return started;
    }
    const node = known ?? this.#add({ turnId, sessionId, depth: 0, state, children: [] }, parent.turnId);
    if (node === undefined) return false;
    if (known !== undefined) this.#roots.delete(turnId); // heard of before its link: now it has a parent
    node.parent = { sessionId: parent.sessionId, turnId: parent.turnId, itemId: parent.itemId };
    node.sessionId = sessionId;
    node.depth = above.depth + 1;
    if (known !== undefined && state === "running" && node.state === "linked") node.state = "running";
    if (!above.children.includes(turnId)) above.children.push(turnId);
    return true;
  }

  /** The node of `turnId`, added as a root (running) when new; `undefined` when the cap leaves no room for it. */
  #ensure(turnId: string, sessionId: string): Node | undefined {
    const node = this.#turns.get(turnId);
    if (node !== undefined) {
      node.sessionId ??= sessionId;
      return node;
    }
    return this.#add({ turnId, sessionId, depth: 0, state: "running", children: [] }, undefined);
  }

  /** Add `node`, a root unless `parentTurnId` is given, then forget whole trees, oldest first, to stay within the cap. */
  #add(node: Node, parentTurnId: string | undefined): Node | undefined {
    const keep = parentTurnId === undefined ? node.turnId : this.#rootOf(parentTurnId);
    if (this.#turns.size >= this.#maxTurns) this.#evict(keep);
    if (this.#turns.size >= this.#maxTurns) {
      this.#forgotten += 1; // one tree holds them all: later turns of it are not tracked
      return undefined;
    }
    this.#turns.set(node.turnId, node);
    if (parentTurnId === undefined) this.#roots.add(node.turnId);
    return node;
  }

  /** Forget whole trees other than `keep`'s until one turn fits: ended trees first, then running ones, oldest first. */
  #evict(keep: string): void {
    for (const endedOnly of [true, false]) {
      for (const root of [...this.#roots]) {
        if (this.#turns.size < this.#maxTurns) return;
        if (root === keep) continue;
        const tree = [this.#turns.get(root) as Node, ...this.#below(root)];
        if (endedOnly && tree.some((n) => n.state !== "ended")) continue;
        for (const n of tree) this.#turns.delete(n.turnId);
        this.#roots.delete(root);
        this.#forgotten += tree.length;
      }
    }
  }

  /** The top of `turnId`'s tree (bounded by the number of turns held, so bad links that loop cannot hang it). */
  #rootOf(turnId: string): string {
    let at = turnId;
    for (let hops = 0; hops <= this.#turns.size; hops++) {
      const up = this.#turns.get(at)?.parent?.turnId;
      if (up === undefined || !this.#turns.has(up)) return at;
      at = up;
    }
    return at;
  }
}

function snapshot(node: Node): TreeTurn {
  const turn: TreeTurn = { turnId: node.turnId, depth: node.depth, state: node.state, children: [...node.children] };
  if (node.sessionId !== undefined) turn.sessionId = node.sessionId;
  if (node.parent !== undefined) turn.parent = { ...node.parent };
  if (node.terminal !== undefined) turn.terminal = { ...node.terminal };
  return turn;
}

/**
 * A tree's progress ({@link TurnTree.progressOf}) as one phrase a person reads:
 * - no descendants: "no subagents";
 * - some running, while the app stops the tree (`stopping`): "stopping 3 of 5 subagents…";
 * - some running: "3 of 5 subagents running";
 * - every one ended: "all 5 subagents ended" ("1 subagent ended").
 *
 * @param progress - The counts of a turn's descendants. @unit turns
 * @param options - `stopping`: the app asked the top turn to stop (default false).
 * @returns One lower-case phrase, with no final period.
 *
 * @example
 * ```ts
 * import { describeTreeProgress } from "@muse-code/sdk/ui";
 *
 * describeTreeProgress({ started: 5, ended: 2, running: 3 }, { stopping: true }); // "stopping 3 of 5 subagents…"
 * describeTreeProgress({ started: 5, ended: 5, running: 0 }); // "all 5 subagents ended"
 * ```
 */
export function describeTreeProgress(progress: TreeProgress, options: { stopping?: boolean } = {}): string {
  const { started, running } = progress;
  const noun = started === 1 ? "subagent" : "subagents";
  if (started === 0) return "no subagents";
  if (running > 0) return options.stopping === true ? `stopping ${running} of ${started} ${noun}…` : `${running} of ${started} ${noun} running`;
  return started === 1 ? "1 subagent ended" : `all ${started} subagents ended`;
}
