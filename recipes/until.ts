/**
 * until: resolve once a condition over the client's state holds, re-checked on every
 * notification, bounded by a timeout. The live arm and the end-to-end tests wait with it.
 */
import type { MspClient } from "@muse-code/sdk";

/** Resolve when `predicate` holds (checked now, then after every notification); reject after `timeoutMs`. */
export function until(msp: MspClient, predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  if (predicate()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!predicate()) return;
      finish();
      resolve();
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      msp.events.off("notification", check);
    };
    msp.events.on("notification", check);
  });
}
