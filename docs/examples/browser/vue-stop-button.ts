/**
 * StopController in Vue 3: a composable that mirrors the controller's snapshot into a shallow
 * ref and unsubscribes when the component's scope is disposed. Checked against local
 * declarations of Vue's API (frameworks.d.ts): this repository does not install Vue.
 */
import { onScopeDispose, shallowRef, type ShallowRef } from "vue";
import type { StopController, StopSnapshot } from "@muse-code/sdk/ui";

// #region composable
export function useStopSnapshot(stop: StopController): Readonly<ShallowRef<StopSnapshot>> {
  const snapshot = shallowRef(stop.getSnapshot());
  onScopeDispose(stop.subscribe((next) => (snapshot.value = next)));
  return snapshot;
}
// In a component: const snapshot = useStopSnapshot(stop); then in the template
// <button :disabled="!snapshot.canStop" :aria-busy="snapshot.state === 'stopping'" @click="stop.stop()">
// #endregion composable
