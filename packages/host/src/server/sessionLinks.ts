/**
 * The subagent tree of the host's sessions: each child session's parent, bounded. Past the bound
 * the oldest link is forgotten first, and a forgotten child is no longer part of its parent's tree.
 */
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";

/**
 * @unit links: the parent→child session links a host remembers by default; beyond it
 * the oldest are forgotten first, and a forgotten child is no longer part of its parent's tree.
 */
export const DEFAULT_MAX_SUBAGENT_LINKS = 10_000;

/** The parent→child links of the host's sessions; see the module header. */
export class SessionLinks {
  /** The parent of each child session linked, at most the bound (its entry in `#children` goes with it). */
  readonly #parents: BoundedMap<string, string>;
  /** The child sessions linked below each session. Holds only links `#parents` keeps. */
  readonly #children = new Map<string, Set<string>>();

  /** `maxLinks`: the links remembered, the oldest forgotten first. A RangeError below 1. */
  constructor(maxLinks: number = DEFAULT_MAX_SUBAGENT_LINKS) {
    if (!(Number.isInteger(maxLinks) && maxLinks >= 1)) throw new RangeError(`maxLinks must be an integer of at least 1, got ${maxLinks}`);
    this.#parents = new BoundedMap({ capacity: maxLinks, onEvict: (child, parent) => this.#unlink(parent, child) });
  }

  /** How many links are remembered. */
  get size(): number {
    return this.#parents.size;
  }

  /** `child` is below `parent` from now on (a link it had elsewhere moves); false for a session linked to itself. */
  link(parent: string, child: string): boolean {
    if (parent === child) return false;
    const previous = this.#parents.get(child);
    if (previous !== undefined) this.#unlink(previous, child);
    let children = this.#children.get(parent);
    if (children === undefined) this.#children.set(parent, (children = new Set()));
    children.add(child);
    this.#parents.set(child, parent); // may forget the oldest link (onEvict edits #children)
    return true;
  }

  /** The session `child` is linked below, if it is linked. */
  parentOf(child: string): string | undefined {
    return this.#parents.get(child);
  }

  /** The sessions linked below `sessionId`, children before grandchildren. */
  descendantsOf(sessionId: string): string[] {
    const found: string[] = [];
    const seen = new Set([sessionId]);
    for (let i = -1; i < found.length; i++) {
      for (const child of this.#children.get(i < 0 ? sessionId : (found[i] as string)) ?? []) {
        if (seen.has(child)) continue;
        seen.add(child);
        found.push(child);
      }
    }
    return found;
  }

  #unlink(parent: string, child: string): void {
    const children = this.#children.get(parent);
    children?.delete(child);
    if (children?.size === 0) this.#children.delete(parent);
  }
}
