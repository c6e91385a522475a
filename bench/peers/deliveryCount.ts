/**
 * deliveryCount: the count check of every throughput row. A row's handler calls `note(seq)` for
 * each notification it is handed; the rate resolves once all N arrived in order (each `seq` one
 * more than the last), and the row fails, never passes, when one is missing, repeated or
 * reordered, or when the stream stalls for `stallMs` before the last.
 */

/** Counts delivered notifications, from the first to the N-th, and times them. */
export class DeliveryCount {
  readonly #n: number;
  #count = 0;
  #first = 0;
  #last = 0;
  #cpuAtFirst: NodeJS.CpuUsage | undefined;
  #cpu: NodeJS.CpuUsage | undefined;
  #settled = false;
  #resolve!: (rate: number) => void;
  #reject!: (error: Error) => void;
  readonly #watchdog: ReturnType<typeof setInterval>;
  /** Messages per second from the first notification to the N-th; rejects on a gap or a stall. */
  readonly rate: Promise<number>;

  constructor(what: string, n: number, stallMs = 10_000) {
    this.#n = n;
    this.rate = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    let seen = -1;
    this.#watchdog = setInterval(() => {
      if (this.#count === seen) this.#fail(new Error(`${what}: stalled after ${this.#count} of ${n} notifications`));
      seen = this.#count;
    }, stallMs);
  }

  /** One notification delivered; `seq` is its 1-based index in the child's stream (undefined: unknown). */
  note(seq: number | undefined): void {
    if (this.#settled) return;
    const now = performance.now();
    if (this.#count === 0) {
      this.#first = now;
      this.#cpuAtFirst = process.cpuUsage();
    }
    this.#count++;
    this.#last = now;
    if (seq !== undefined && seq !== this.#count)
      return this.#fail(new Error(`expected notification ${this.#count}, got ${seq}: one was dropped, repeated or reordered`));
    if (this.#count === this.#n) {
      this.#settled = true;
      this.#cpu = process.cpuUsage(this.#cpuAtFirst);
      clearInterval(this.#watchdog);
      this.#resolve(this.#n / ((this.#last - this.#first) / 1000));
    }
  }

  /**
   * This process's CPU time (user + system, every thread: GC included) from the first
   * notification to the N-th, per notification; undefined until all N arrived. @unit microseconds
   */
  get cpuUsPerMessage(): number | undefined {
    return this.#cpu === undefined ? undefined : (this.#cpu.user + this.#cpu.system) / (this.#n - 1);
  }

  /** How many were delivered so far. */
  get count(): number {
    return this.#count;
  }

  #fail(error: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    clearInterval(this.#watchdog);
    this.#reject(error);
  }
}
