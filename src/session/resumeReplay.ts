/**
 * ResumeReplay: waits, bounded, until a `session/resume`'s replay has been heard (its `replayed`
 * count of notifications), so what the session shows moves from `reconnecting` straight to what
 * the host had written, never through a state the replay is about to overturn.
 */

/** One resume's replay, counted from the moment its command was written. */
export class ResumeReplay {
  #heard = 0;
  #expected: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #resolve: ((late: string | undefined) => void) | undefined;
  /** Settles with undefined once the replay is heard (or the wait was ended), or with what was missing past the bound. */
  readonly done: Promise<string | undefined>;

  constructor() {
    this.done = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** A notification (delivered or refused) arrived on the resuming connection. */
  heard(): void {
    this.#heard++;
    this.#check();
  }

  /**
   * The answer came: `replayed` notifications follow it (a host that states no count: none).
   * Waits at most `timeoutMs` for them.
   */
  expect(replayed: unknown, timeoutMs: number): void {
    this.#expected = typeof replayed === "number" && Number.isSafeInteger(replayed) && replayed > 0 ? replayed : 0;
    if (this.#check()) return;
    this.#timer = setTimeout(() => {
      this.#finish(`session/resume said ${String(this.#expected)} notifications would be replayed; ${this.#heard} came within ${timeoutMs} ms`);
    }, timeoutMs);
  }

  /** Stop waiting (the connection went, or the session closed). */
  end(): void {
    this.#finish(undefined);
  }

  #check(): boolean {
    if (this.#expected === undefined || this.#heard < this.#expected) return false;
    this.#finish(undefined);
    return true;
  }

  #finish(late: string | undefined): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const resolve = this.#resolve;
    this.#resolve = undefined;
    resolve?.(late);
  }
}
