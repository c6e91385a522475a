/**
 * StopController in Svelte: a readable store. Svelte's store contract needs no import: an object
 * whose `subscribe(run)` calls `run` at once with the current value and again on every change,
 * and returns the unsubscribe function. `$stopState` in a component (or `fromStore` in Svelte 5)
 * then follows the controller.
 */
import type { StopController, StopSnapshot } from "@muse-code/sdk/ui";

// #region store
/** Svelte's store contract (what `svelte/store`'s `Readable` describes). */
export interface Readable<T> {
  subscribe(run: (value: T) => void): () => void;
}

export function stopStore(stop: StopController): Readable<StopSnapshot> {
  return {
    subscribe(run) {
      run(stop.getSnapshot());
      return stop.subscribe(run);
    },
  };
}
// In a component: const stopState = stopStore(stop); then
// <button disabled={!$stopState.canStop} aria-busy={$stopState.state === "stopping"} onclick={() => stop.stop()}>
// #endregion store
