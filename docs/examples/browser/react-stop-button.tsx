/**
 * StopController in React: `useSyncExternalStore` re-renders the component on every change of
 * the controller's snapshot. Checked against local declarations of React's API
 * (frameworks.d.ts): this repository does not install React.
 */
import { useCallback, useSyncExternalStore } from "react";
import type { StopController, StopSnapshot } from "@muse-code/sdk/ui";

// #region hook
export function useStopSnapshot(stop: StopController): StopSnapshot {
  // subscribe and getSnapshot are methods: pass them as arrow functions, not `stop.subscribe`.
  const subscribe = useCallback((onChange: () => void) => stop.subscribe(onChange), [stop]);
  return useSyncExternalStore(subscribe, () => stop.getSnapshot());
}

export function StopButton({ stop }: { stop: StopController }) {
  const { state, canStop, turnCompleted: terminal } = useStopSnapshot(stop);
  return (
    <>
      <button type="button" disabled={!canStop} aria-busy={state === "stopping"} onClick={() => void stop.stop()}>
        {state === "stopping" ? "Stopping…" : "Stop"}
      </button>
      <p role="status">{state === "ended" ? `${terminal?.terminal}: ${terminal?.reason}` : state}</p>
    </>
  );
}
// #endregion hook
