/**
 * followTurnTree: a {@link TurnTree} kept current from a connected client's `notification` event,
 * with a bounded wait for "every turn below turn X has ended". The client already
 * delivers its child sessions' notifications, so nothing else is needed to follow the tree.
 */
import { MspError } from "../errors.js";
import { boundedWait, type BoundedWait } from "../internal/boundedWait.js";
import type { CloseInfo } from "../types/closeInfo.js";
import type { WaitOptions } from "../types/waitOptions.js";
import type { MspEventEmitter, MspNotification } from "../turns/mspEvents.js";
import { TurnTree, type TreeTurn } from "./turnTree.js";

/**
 * A turn that has ended and every turn below it, as {@link TurnTreeFollower.treeEnded} resolves.
 *
 * @example
 * ```ts
 * const follower = followTurnTree(client);
 * const { turn, descendants }: EndedTree = await follower.treeEnded(turnId, { timeoutMs: 60_000 });
 * console.log(turn.terminal?.terminal, descendants.map((d) => d.terminal?.cause?.kind));
 * ```
 */
export interface EndedTree {
  /** The turn, with its own terminal. */
  readonly turn: TreeTurn;
  /**
   * Every turn below it, depth-first, each with its own terminal when the host sent one. A child
   * that never got one (linked but never started: its start failed, or it was lost to a crash
   * between link and start) is listed as it stood (`linked` or `running`), never with a made-up terminal.
   */
  readonly descendants: readonly TreeTurn[];
}

/**
 * Options of {@link followTurnTree}.
 *
 * @example
 * ```ts
 * const follower = followTurnTree(client, { tree: new TurnTree({ maxTurns: 256 }) });
 * ```
 */
export interface FollowTurnTreeOptions {
  /** The tree to keep current (for example one restored or shared by the app). @defaultValue a new `TurnTree()` */
  tree?: TurnTree;
}

/**
 * What {@link followTurnTree} returns: the tree it keeps current, a bounded wait for a turn's
 * whole tree to end, and `dispose()` to stop following.
 *
 * @example
 * ```ts
 * const follower = followTurnTree(client);
 * const turn = client.startTurn({ sessionId, input });
 * const { turnId } = await turn.accepted;
 * await turn.cancel({ timeoutMs: 60_000 }); // the parent's terminal: by invariant 7, the whole tree
 * console.log(describeTreeProgress(follower.tree.progressOf(turnId))); // "all 3 subagents ended"
 * ```
 */
export interface TurnTreeFollower {
  /** The tree, fed every notification the client delivers (its child sessions' included). */
  readonly tree: TurnTree;
  /**
   * Resolves on `turnId`'s own `turn/completed`. By invariant 7 the host sends a parent's
   * `turn/completed` only after every child's, so the parent's own terminal is the end of the tree
   * (a child linked but never started does not keep it waiting): a Stop of the parent (`cancelTurn`, `TurnHandle.cancel`,
   * `StopController`) already waits for exactly this, and this wait is for a UI that only follows.
   * Looks the tree up first (resolves at once when it already ended), then waits. Bounded by
   * `timeoutMs` (default: no limit) and `signal`; rejects with `MspError` `timeout`, `aborted`
   * (the signal, or `dispose()`), or `connectionClosed` (the client closed first).
   */
  treeEnded(turnId: string, options?: WaitOptions): Promise<EndedTree>;
  /** Stop following: the listeners are removed and pending waits reject with `aborted`. Idempotent. */
  dispose(): void;
}

/**
 * Follow the subagent trees a client hears: subscribes a {@link TurnTree} to `client.events`'
 * `notification` event (not the replace-only `onNotification`, which stays the app's), and
 * returns the tree with a bounded wait for a turn's whole tree to end. A malformed link the tree
 * refuses reaches `client.events`' `handlerError` as the tree's typed `MspError` `protocol`.
 *
 * @param client - A connected client (`connect`, `connectWebSocket`, `spawnHost`).
 * @param options - `tree`: the tree to feed (default a new one).
 * @returns The follower; `dispose()` it to stop.
 *
 * @example
 * ```ts
 * import { followTurnTree, describeTreeProgress } from "@muse-code/sdk/ui";
 *
 * const follower = followTurnTree(client);
 * let stopping = false; // set when the app presses Stop
 * client.events.on("notification", () => {
 *   status.textContent = describeTreeProgress(follower.tree.progressOf(turnId), { stopping });
 * });
 * const { descendants } = await follower.treeEnded(turnId, { timeoutMs: 120_000 });
 * ```
 */
export function followTurnTree(
  client: { readonly events: Pick<MspEventEmitter, "on" | "off">; readonly isClosed: boolean },
  options: FollowTurnTreeOptions = {},
): TurnTreeFollower {
  const tree = options.tree ?? new TurnTree();
  const waiters = new Map<string, Set<BoundedWait<EndedTree>>>();
  let closed: CloseInfo | undefined;
  let disposed = false;

  const ended = (turnId: string): EndedTree | undefined => {
    const turn = tree.turn(turnId);
    // By invariant 7 the turn's own terminal is the end of its whole tree: a child linked but never started (its start failed) is not waited for.
    if (turn?.state !== "ended") return undefined;
    return { turn, descendants: tree.descendantsOf(turnId) };
  };
  const rejectAll = (error: (turnId: string) => MspError) => {
    for (const [turnId, set] of [...waiters]) for (const wait of [...set]) wait.reject(error(turnId));
  };
  const onNotification = (notification: MspNotification) => {
    if (!tree.observe(notification)) return;
    for (const [turnId, set] of [...waiters]) {
      const value = ended(turnId);
      if (value !== undefined) for (const wait of [...set]) wait.resolve(value);
    }
  };
  const closedError = (turnId: string, info: CloseInfo) =>
    new MspError("connectionClosed", `waiting for the tree below turn ${turnId}: ${info.reason}`, {
      reason: info.reason,
      ...(info.closeCode === undefined ? {} : { closeCode: info.closeCode }),
    });
  const onClose = (info: CloseInfo) => {
    closed = info;
    rejectAll((turnId) => closedError(turnId, info));
  };
  client.events.on("notification", onNotification);
  client.events.on("close", onClose);

  return {
    tree,
    treeEnded(turnId: string, waitOptions: WaitOptions = {}): Promise<EndedTree> {
      const now = ended(turnId);
      if (now !== undefined) return Promise.resolve(now);
      if (disposed) return Promise.reject(new MspError("aborted", `waiting for the tree below turn ${turnId}: the follower was disposed`, { turnId }));
      if (closed !== undefined || client.isClosed) return Promise.reject(closedError(turnId, closed ?? { reason: "the connection is closed" }));
      let set = waiters.get(turnId);
      if (set === undefined) waiters.set(turnId, (set = new Set()));
      const wait: BoundedWait<EndedTree> = boundedWait(`waiting for the tree below turn ${turnId} to end`, { turnId }, waitOptions, Infinity, () => {
        set.delete(wait);
        if (set.size === 0) waiters.delete(turnId);
      });
      set.add(wait);
      return wait.promise;
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      client.events.off("notification", onNotification);
      client.events.off("close", onClose);
      rejectAll((turnId) => new MspError("aborted", `waiting for the tree below turn ${turnId}: the follower was disposed`, { turnId }));
    },
  };
}
