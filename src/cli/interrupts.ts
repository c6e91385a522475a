/** Interrupts: Ctrl-C (SIGINT) as `muse` sees it, counted, so the first can Stop and the second quit. */

/**
 * A source of Ctrl-C presses.
 *
 * @example
 * ```ts
 * const off = processInterrupts().on((press) => console.error(press === 1 ? "stopping…" : "quitting"));
 * off();
 * ```
 */
export interface Interrupts {
  /** Call `handler` on each press with its number (1, 2, …); returns the function that stops listening. */
  on(handler: (press: number) => void): () => void;
}

/**
 * The process's SIGINT. While a handler is installed, Ctrl-C no longer kills `muse`; the handler
 * decides. Removing the last handler restores Node's default.
 *
 * @example
 * ```ts
 * const off = processInterrupts().on(() => void turn.cancel());
 * ```
 */
export function processInterrupts(): Interrupts {
  return {
    on(handler) {
      let presses = 0;
      const listener = () => handler(++presses);
      process.on("SIGINT", listener);
      return () => void process.off("SIGINT", listener);
    },
  };
}
