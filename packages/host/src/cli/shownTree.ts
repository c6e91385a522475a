/**
 * ShownTree: the subagent trees below the turns `muse` shows, folded from the
 * notification stream with the SDK's `TurnTree`: which child turns belong to a shown turn, how deep
 * each one is, the name it is shown by (the agent the delegating call named, else its turn id's
 * short form), and how many are still running, for "stopping 2 of 3 subagents…".
 */
import type { Item, MspNotification } from "@muse-code/sdk";
import { TurnTree, type TreeProgress } from "@muse-code/sdk/ui";

/** How many subagent names a {@link ShownTree} keeps (the oldest are forgotten first). @unit turns */
const MAX_NAMED = 1024;

/**
 * A child turn as `muse` shows it: its depth below the top-level turn, its name, and the prompt the
 * delegating call gave it.
 */
export interface ShownSubagent {
  /** @unit levels below the top-level turn: 1 for a child, 2 for a grandchild, … */
  depth: number;
  /** The agent the delegating call named (`args.agent`), else `turn …` and the last 8 characters of its turn id. */
  name: string;
  /** The delegating call's `args.prompt`, when it had one. */
  prompt?: string;
}

/**
 * What `muse` knows of the subagent trees of a connection: feed it every notification with the
 * item the client folded from it (`observe`), then ask whether a turn belongs below a shown one
 * (`isBelow`), how to show a child turn (`subagent`), and how many descendants of a turn are still
 * running (`progressOf`). A malformed notification is left to the SDK (which reports it as a
 * protocol error): it changes nothing here.
 */
export class ShownTree {
  readonly #tree = new TurnTree();
  /** Each linked child turn's name and prompt, from its delegating call's arguments. */
  readonly #named = new Map<string, { name: string; prompt?: string }>();

  /**
   * Fold one notification in, with the whole item the client folded from it (an item
   * notification), which carries the delegating call's arguments.
   */
  observe(notification: MspNotification, item?: Item): void {
    try {
      this.#tree.observe(notification);
    } catch {
      // Malformed: the SDK reports it; the tree stays as it was.
    }
    if (item?.kind !== "toolCall" || item.subagent === undefined) return;
    const turnId = item.subagent.turnId;
    if (this.#named.has(turnId)) return;
    const args = parseArgs(item.args);
    const agent = typeof args["agent"] === "string" && args["agent"] !== "" ? args["agent"] : undefined;
    const short = `turn …${turnId.slice(-8)}`;
    const taken = agent !== undefined && [...this.#named.values()].some((n) => n.name === agent);
    const name = agent === undefined ? short : taken ? `${agent}#${turnId.slice(-4)}` : agent;
    if (this.#named.size >= MAX_NAMED) this.#named.delete(this.#named.keys().next().value as string);
    this.#named.set(turnId, typeof args["prompt"] === "string" ? { name, prompt: args["prompt"] } : { name });
  }

  /** Whether `turnId` is one of `shown` or a turn below one of them (a child, a grandchild, …). */
  isBelow(turnId: string, shown: ReadonlySet<string>): boolean {
    let at: string | undefined = turnId;
    // Bounded by the tree's size: links that loop cannot hang it.
    for (let hops = 0; at !== undefined && hops <= this.#tree.size + 1; hops++) {
      if (shown.has(at)) return true;
      at = this.#tree.turn(at)?.parent?.turnId;
    }
    return false;
  }

  /**
   * How to show `turnId` when it is a child turn (its depth, name and prompt); `undefined` for a
   * top-level turn or one the tree does not know.
   */
  subagent(turnId: string): ShownSubagent | undefined {
    const turn = this.#tree.turn(turnId);
    if (turn === undefined || turn.parent === undefined || turn.depth < 1) return undefined;
    const named = this.#named.get(turnId) ?? { name: `turn …${turnId.slice(-8)}` };
    return { depth: turn.depth, ...named };
  }

  /** The descendants of `turnId` the stream told of, and how many ended ({@link TurnTree.progressOf}). */
  progressOf(turnId: string): TreeProgress {
    return this.#tree.progressOf(turnId);
  }
}

/** A tool call's JSON arguments as an object; `{}` when they are not one. */
function parseArgs(args: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(args) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
