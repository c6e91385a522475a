/**
 * Vue 3: the session's snapshot as a shallow ref, kept current by `subscribe` and let go with the
 * component's scope. The session is opened once, outside components.
 */
import { onScopeDispose, shallowRef, type ShallowRef } from "vue";
import type { MspSession, SessionSnapshot } from "@muse-code/sdk/session";

// #region composable
export function useSession(session: MspSession): ShallowRef<SessionSnapshot> {
  const snapshot = shallowRef(session.getSnapshot());
  const unsubscribe = session.subscribe(() => {
    snapshot.value = session.getSnapshot();
  });
  onScopeDispose(unsubscribe);
  return snapshot;
}
// #endregion composable
