/**
 * Installs a minimal, browser-safe runtime layer for vscode-jsonrpc's common core when
 * none is installed yet. We use only its timers and console; framing is ours.
 */
import { RAL } from "vscode-jsonrpc";

type Callback = (...args: unknown[]) => void;

function disposable(dispose: () => void): { dispose(): void } {
  return { dispose };
}

/**
 * vscode-jsonrpc's "immediate": a microtask. Its MessageConnection here only answers the rare
 * host-to-client request, so the finer ordering of a real setImmediate buys nothing.
 */
function setImmediateLike(callback: Callback, ...args: unknown[]): { dispose(): void } {
  let live = true;
  queueMicrotask(() => {
    if (live) callback(...args);
  });
  return disposable(() => {
    live = false;
  });
}

/** Makes sure vscode-jsonrpc has a runtime layer; keeps one that an app installed itself. */
export function ensureRuntime(): void {
  try {
    RAL();
    return;
  } catch {
    // none installed yet
  }
  // Only what vscode-jsonrpc's common core reads for the MessageConnection we use: its timers and
  // its console. Its stream reader and writer, which we never use, are the only readers of the rest.
  RAL.install({
    console,
    timer: {
      setTimeout(callback: Callback, ms: number, ...args: unknown[]) {
        const handle = setTimeout(callback, ms, ...args);
        return disposable(() => clearTimeout(handle));
      },
      setImmediate: setImmediateLike,
    },
  } as unknown as RAL);
}
