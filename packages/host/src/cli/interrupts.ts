/** Interrupts: Ctrl-C (SIGINT) as `muse` sees it, counted, so the first can Stop and the second quit. */

/** Bound on a stop (its ack and the terminal) before `muse` says the host is slow; it keeps waiting. @unit milliseconds */
export const STOP_NOTICE_MS = 30_000;

/** A source of Ctrl-C presses. */
export interface Interrupts {
  /** Call `handler` on each press with its number (1, 2, …); returns the function that stops listening. */
  on(handler: (press: number) => void): () => void;
}

/**
 * The process's SIGINT, SIGTERM and SIGHUP. While a handler is installed, Ctrl-C no longer kills
 * `muse`; the handler decides. SIGTERM and SIGHUP (a closed terminal) count as the second press at
 * once: close the connection and the spawned host now, rather than die and leave the host
 * with broken pipes. Removing the last handler restores Node's defaults.
 */
export function processInterrupts(): Interrupts {
  return {
    on(handler) {
      let presses = 0;
      const onInterrupt = () => handler(++presses);
      const onHangUp = () => {
        if (presses >= 2) return;
        presses = 2;
        handler(presses);
      };
      process.on("SIGINT", onInterrupt);
      process.on("SIGTERM", onHangUp);
      process.on("SIGHUP", onHangUp);
      return () => {
        process.off("SIGINT", onInterrupt);
        process.off("SIGTERM", onHangUp);
        process.off("SIGHUP", onHangUp);
      };
    },
  };
}
