/**
 * Svelte: the session as a readable store (`$chat.turns` in a component). The store contract needs
 * no import: `subscribe(run)` calls `run` at once and on every change, and returns the unsubscribe.
 */
import type { MspSession, SessionSnapshot } from "@muse-code/sdk/session";

// #region store
export function sessionStore(session: MspSession): { subscribe(run: (snapshot: SessionSnapshot) => void): () => void } {
  return {
    subscribe(run) {
      run(session.getSnapshot());
      return session.subscribe(() => run(session.getSnapshot()));
    },
  };
}
// #endregion store
