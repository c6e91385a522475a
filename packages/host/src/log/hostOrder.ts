/**
 * The host order: one sequence across every session log of a data dir, stamped on each
 * notification record as `h` when it is logged, so a resume of a tree can merge its sessions'
 * logs in the order the host logged them, after a restart too.
 */

/**
 * The host-wide sequence of notification records. A host starts it above the highest `h` its
 * recovery read ({@link HostOrder.seen}), then stamps each record it logs with {@link HostOrder.next}.
 */
export class HostOrder {
  #last = 0;

  /** The highest `h` stamped or seen (0 before any). */
  get last(): number {
    return this.#last;
  }

  /** The next `h`: one above every one stamped or seen. */
  next(): number {
    this.#last += 1;
    return this.#last;
  }

  /** Notes an `h` read back from a log: later stamps go above it. */
  seen(h: number): void {
    if (Number.isSafeInteger(h) && h > this.#last) this.#last = h;
  }
}

/**
 * Where one session's record stands in the host order: its `h` (absent in a record an older host
 * logged) and its cursor number `n`.
 */
export interface OrderedRecord {
  h?: number;
  n: number;
}

/**
 * Which of the sessions' next records comes first in the host order: the index of the smallest
 * `h` among `heads` (`undefined` entries are sessions with nothing left). A record without `h`
 * (logged by an older host) comes before every stamped one; ties (two unstamped records) go to the
 * earlier index, the resumed session first. Returns -1 when every entry is `undefined`.
 */
export function firstInHostOrder(heads: ReadonlyArray<OrderedRecord | undefined>): number {
  let best = -1;
  let bestH = Infinity;
  for (let i = 0; i < heads.length; i++) {
    const head = heads[i];
    if (head === undefined) continue;
    const h = head.h ?? 0;
    if (best < 0 || h < bestH) {
      best = i;
      bestH = h;
    }
  }
  return best;
}
