/**
 * The host's one routing table: who hears each session (its notifications), who answers its
 * questions (`tool/approve`), and the subagent tree between sessions. Every table is bounded; see
 * "Bounds" in docs/protocol.md.
 */

/**
 * @unit links: the parent→child session links a host remembers by default. Past it the oldest
 * link whose child has no running turn is forgotten, and that child is no longer part of its
 * parent's tree.
 */
export const DEFAULT_MAX_SUBAGENT_LINKS = 10_000;

/**
 * @unit sessions: how many sessions of its own (created or resumed) one connection may hear by
 * default; past it `session/create` and `session/resume` of another answer `too_many_sessions`.
 */
export const DEFAULT_MAX_SESSIONS_PER_CONNECTION = 1_024;

/** Options of a {@link SessionRoutes}. */
export interface SessionRoutesOptions {
  /** @unit links @defaultValue {@link DEFAULT_MAX_SUBAGENT_LINKS} */
  maxLinks?: number;
  /** @unit sessions: of a connection's own @defaultValue {@link DEFAULT_MAX_SESSIONS_PER_CONNECTION} */
  maxSessionsPerConnection?: number;
  /** Whether `sessionId` has a running turn: the link of a running child session is never forgotten. */
  busy?: (sessionId: string) => boolean;
}

function bound(name: string, value: number): number {
  if (!(Number.isInteger(value) && value >= 1)) throw new RangeError(`${name} must be an integer of at least 1, got ${value}`);
  return value;
}

/** Adds `value` to the set at `key` of `map`, creating the set. */
function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (set === undefined) map.set(key, (set = new Set()));
  set.add(value);
}

/** Removes `value` from the set at `key` of `map`, and the set once it is empty; answers whether it was there. */
function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): boolean {
  const set = map.get(key);
  if (set?.delete(value) !== true) return false;
  if (set.size === 0) map.delete(key);
  return true;
}

/**
 * Who hears, who answers, and the tree, for targets `T` (the host's subscribers, compared by
 * identity). A target hears the sessions it created or resumed (its own) and every session linked
 * below them; it speaks for (is asked the questions of) those it attached to, the most recent
 * speaker of a session first.
 */
export class SessionRoutes<T extends object> {
  readonly #maxLinks: number;
  readonly #maxOwn: number;
  readonly #busy: (sessionId: string) => boolean;
  /** Each linked child's parent, oldest link first. */
  readonly #parents = new Map<string, string>();
  /** The children linked below each session (only links `#parents` holds). */
  readonly #children = new Map<string, Set<string>>();
  /** The targets that hear each session. */
  readonly #hearers = new Map<string, Set<T>>();
  /** The sessions each target hears. */
  readonly #heard = new Map<T, Set<string>>();
  /** The sessions each target created or resumed: the ones the per-connection bound counts. */
  readonly #own = new Map<T, Set<string>>();
  /** The targets that speak for each session, most recent last. */
  readonly #speakers = new Map<string, T[]>();
  /** The sessions each target speaks for. */
  readonly #spoken = new Map<T, Set<string>>();
  /** Told when a target stops hearing a session because its link was forgotten. */
  #onUnheard: (target: T, sessionId: string) => void = () => {};

  constructor(options: SessionRoutesOptions = {}) {
    this.#maxLinks = bound("maxLinks", options.maxLinks ?? DEFAULT_MAX_SUBAGENT_LINKS);
    this.#maxOwn = bound("maxSessionsPerConnection", options.maxSessionsPerConnection ?? DEFAULT_MAX_SESSIONS_PER_CONNECTION);
    this.#busy = options.busy ?? (() => false);
  }

  /** How many parent→child links are remembered. */
  get linkCount(): number {
    return this.#parents.size;
  }

  /** The bound on a target's own sessions. */
  get maxSessionsPerConnection(): number {
    return this.#maxOwn;
  }

  /** `listener` is told each time a target stops hearing a session whose link was forgotten (one listener: the last set). */
  onUnheard(listener: (target: T, sessionId: string) => void): void {
    this.#onUnheard = listener;
  }

  /**
   * Links `child` below `parent` (a link it had elsewhere moves): everyone who hears `parent`
   * hears `child` from now on, and the speakers of `parent` speak for it, in the same order.
   * Returns the targets that hear `child` because of it (none for a session linked to itself).
   */
  link(parent: string, child: string): T[] {
    if (parent === child) return [];
    const previous = this.#parents.get(child);
    if (previous !== undefined) removeFrom(this.#children, previous, child);
    this.#parents.delete(child);
    this.#parents.set(child, parent);
    addTo(this.#children, parent, child);
    const newly = [...(this.#hearers.get(parent) ?? [])].filter((target) => this.#hear(target, child));
    for (const target of this.#speakers.get(parent) ?? []) this.#speak(target, child);
    this.#forgetOldLinks(child);
    return newly;
  }

  /** Past the bound: forgets the oldest links whose child has no running turn (never `keep`'s). */
  #forgetOldLinks(keep: string): void {
    if (this.#parents.size <= this.#maxLinks) return;
    for (const [child, parent] of this.#parents) {
      if (this.#parents.size <= this.#maxLinks) return;
      if (child === keep || this.#busy(child)) continue;
      this.#parents.delete(child);
      removeFrom(this.#children, parent, child);
      // Who heard it only through the tree hears it no more, nor answers for it.
      for (const target of [...(this.#hearers.get(child) ?? [])]) {
        if (this.#own.get(target)?.has(child) === true) continue;
        this.#unhear(target, child);
        this.#unspeak(target, child);
        this.#onUnheard(target, child);
      }
    }
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

  /** Whether `target` may make `sessionId` (undefined: a new session) its own: it hears it already, or has fewer own sessions than the bound. */
  admits(target: T, sessionId: string | undefined): boolean {
    if (sessionId !== undefined && this.hears(target, sessionId)) return true;
    return (this.#own.get(target)?.size ?? 0) < this.#maxOwn;
  }

  /** `target` created or resumed `sessionId`: it hears it and the tree below it from now on. Answers whether it did not hear `sessionId` before. */
  hear(target: T, sessionId: string): boolean {
    addTo(this.#own, target, sessionId);
    const newly = this.#hear(target, sessionId);
    for (const child of this.descendantsOf(sessionId)) this.#hear(target, child);
    return newly;
  }

  #hear(target: T, sessionId: string): boolean {
    if (this.#heard.get(target)?.has(sessionId) === true) return false;
    addTo(this.#heard, target, sessionId);
    addTo(this.#hearers, sessionId, target);
    return true;
  }

  #unhear(target: T, sessionId: string): void {
    removeFrom(this.#heard, target, sessionId);
    removeFrom(this.#hearers, sessionId, target);
  }

  /** Whether `target` hears `sessionId`. */
  hears(target: T, sessionId: string): boolean {
    return this.#heard.get(target)?.has(sessionId) === true;
  }

  /** The targets that hear `sessionId` (none: `undefined`). */
  hearersOf(sessionId: string): ReadonlySet<T> | undefined {
    return this.#hearers.get(sessionId);
  }

  /** How many sessions `target` hears, its own and the trees below them. */
  heardCount(target: T): number {
    return this.#heard.get(target)?.size ?? 0;
  }

  /** `target` speaks for `sessionId` and the tree below it, before every earlier speaker; returns those sessions. */
  speak(target: T, sessionId: string): string[] {
    const sessions = [sessionId, ...this.descendantsOf(sessionId)];
    for (const id of sessions) this.#speak(target, id);
    return sessions;
  }

  #speak(target: T, sessionId: string): void {
    const speakers = (this.#speakers.get(sessionId) ?? []).filter((t) => t !== target);
    speakers.push(target);
    this.#speakers.set(sessionId, speakers);
    addTo(this.#spoken, target, sessionId);
  }

  #unspeak(target: T, sessionId: string): void {
    if (!removeFrom(this.#spoken, target, sessionId)) return;
    const left = (this.#speakers.get(sessionId) ?? []).filter((t) => t !== target);
    if (left.length === 0) this.#speakers.delete(sessionId);
    else this.#speakers.set(sessionId, left);
  }

  /** The most recent speaker of `sessionId` still attached. */
  speakerOf(sessionId: string): T | undefined {
    return this.#speakers.get(sessionId)?.at(-1);
  }

  /** `target` closed: it speaks for no session any more. */
  stopSpeaking(target: T): void {
    for (const sessionId of [...(this.#spoken.get(target) ?? [])]) this.#unspeak(target, sessionId);
  }

  /** `target` is gone: it hears and speaks for nothing. Returns the sessions nobody hears now. */
  leave(target: T): string[] {
    this.stopSpeaking(target);
    const unheard: string[] = [];
    for (const sessionId of [...(this.#heard.get(target) ?? [])]) {
      this.#unhear(target, sessionId);
      if (!this.#hearers.has(sessionId)) unheard.push(sessionId);
    }
    this.#own.delete(target);
    return unheard;
  }
}
