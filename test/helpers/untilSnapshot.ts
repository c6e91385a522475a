/**
 * Waits, bounded, for a session's snapshot to satisfy a predicate: checked now and on every
 * change the session reports. Rejects after `timeoutMs`, naming what it waited for and the last
 * snapshot (cut to 3000 characters).
 */
import type { MspSession, SessionSnapshot } from "../../src/session/index.js";

export function untilSnapshot(session: MspSession, predicate: (s: SessionSnapshot) => boolean, what: string, timeoutMs = 45_000): Promise<SessionSnapshot> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const snapshot = session.getSnapshot();
      if (!predicate(snapshot)) return;
      clearTimeout(timer);
      off();
      resolve(snapshot);
    };
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}; last snapshot: ${JSON.stringify(session.getSnapshot()).slice(0, 3000)}`));
    }, timeoutMs);
    const off = session.subscribe(check);
    check();
  });
}
