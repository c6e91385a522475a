/**
 * The framework snippets of docs/stop-button.md (docs/examples/browser/{react,vue,svelte}-stop-button)
 * run here against a real StopController on a real turn of the reference host (stdio), Stop
 * pressed mid-tool. React and Vue are not dependencies of this repository, so their few APIs are
 * stand-ins with the documented contracts: `useSyncExternalStore` re-renders when the snapshot
 * changes and insists that `getSnapshot` is stable between changes (React's own dev check),
 * `useCallback` memoizes by deps, `shallowRef` is a box, `onScopeDispose` collects disposers.
 * Svelte's store contract needs no stand-in.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { StopController, type StopSnapshot } from "@muse-code/sdk/ui";
import { spawnReferenceHost, type SpawnedHost } from "@muse-code/sdk/node";
import { repoRoot } from "../helpers/repoRoot.js";

/** A one-component React stand-in: renders the component again whenever a subscribed store changes. */
const react = vi.hoisted(() => {
  const state = { renders: 0, subscriptions: 0, rerender: () => {}, memo: new Map<number, { fn: unknown; deps: readonly unknown[] }>(), slot: 0 };
  return {
    state,
    useSyncExternalStore<T>(subscribe: (onChange: () => void) => () => void, getSnapshot: () => T): T {
      const first = getSnapshot();
      if (!Object.is(first, getSnapshot())) throw new Error("getSnapshot must return the same value until the store changes");
      if (state.renders === 1) {
        state.subscriptions += 1;
        subscribe(() => state.rerender());
      }
      return first;
    },
    useCallback<F>(fn: F, deps: readonly unknown[]): F {
      const slot = state.slot++;
      const kept = state.memo.get(slot);
      if (kept !== undefined && kept.deps.every((d, i) => Object.is(d, deps[i]))) return kept.fn as F;
      state.memo.set(slot, { fn, deps });
      return fn;
    },
  };
});
vi.mock("react", () => ({ useSyncExternalStore: react.useSyncExternalStore, useCallback: react.useCallback }));
const jsx = vi.hoisted(() => ({ element: (type: unknown, props: Record<string, unknown>) => ({ type, props }), Fragment: Symbol("Fragment") }));
// Vite compiles JSX for development (jsxDEV from react/jsx-dev-runtime); a production build uses react/jsx-runtime.
vi.mock("react/jsx-runtime", () => ({ jsx: jsx.element, jsxs: jsx.element, Fragment: jsx.Fragment }));
vi.mock("react/jsx-dev-runtime", () => ({ jsxDEV: jsx.element, Fragment: jsx.Fragment }));
const vue = vi.hoisted(() => ({ disposers: [] as (() => void)[] }));
vi.mock("vue", () => ({ shallowRef: <T>(value: T) => ({ value }), onScopeDispose: (fn: () => void) => vue.disposers.push(fn) }));

const { StopButton } = await import("../../docs/examples/browser/react-stop-button.js");
const { useStopSnapshot } = await import("../../docs/examples/browser/vue-stop-button.js");
const { stopStore } = await import("../../docs/examples/browser/svelte-stop-button.js");

interface Element {
  type: unknown;
  props: { children?: unknown; disabled?: boolean; "aria-busy"?: boolean; onClick?: () => void };
}

let host: SpawnedHost;
let sessionId: string;

beforeAll(async () => {
  host = spawnReferenceHost({ script: join(repoRoot, "packages/host/models", "demo.json") });
  ({ sessionId } = await host.command("session/create", {}));
}, 20_000);
afterAll(async () => {
  await host?.close();
});

/** A turn whose shell tool is running, and its StopController. */
async function runningTurn(): Promise<StopController> {
  const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "build" }] });
  const stop = new StopController(turn);
  await turn.accepted;
  await new Promise<void>((resolve) => {
    const check = () => (host.items.itemsOf(turn.commandId).some((item) => item.kind === "toolCall") ? resolve() : setTimeout(check, 20));
    check();
  });
  return stop;
}

describe("StopController in the framework snippets (a real turn, Stop mid-tool)", () => {
  it("React: the button re-renders through useSyncExternalStore, Stopping… from the click until the terminal", async () => {
    const stop = await runningTurn();
    const frames: Element[] = [];
    const render = () => {
      react.state.renders += 1;
      react.state.slot = 0;
      frames.push(StopButton({ stop }) as unknown as Element);
    };
    react.state.rerender = render;
    render();
    const view = (frame: Element) => {
      const [button, status] = frame.props.children as [Element, Element];
      return { label: button.props.children, disabled: button.props.disabled, busy: button.props["aria-busy"], status: status.props.children };
    };
    expect(view(frames[0] as Element)).toEqual({ label: "Stop", disabled: false, busy: false, status: "running" });
    const [button] = (frames[0] as Element).props.children as [Element];
    button.props.onClick?.();
    expect(view(frames.at(-1) as Element)).toEqual({ label: "Stopping…", disabled: true, busy: true, status: "stopping" });
    await stop.stop();
    expect(view(frames.at(-1) as Element)).toEqual({ label: "Stop", disabled: true, busy: false, status: "cancelled: cancelled during tool execution" });
    // One subscription for all those renders: useCallback kept the subscribe function.
    expect(react.state.subscriptions).toBe(1);
    expect(frames.length).toBe(3);
  });

  it("Vue: the shallow ref follows the controller, and the scope's disposal unsubscribes", async () => {
    const stop = await runningTurn();
    const snapshot = useStopSnapshot(stop);
    expect(snapshot.value.state).toBe("running");
    const stopping = stop.stop();
    expect(snapshot.value.state).toBe("stopping");
    await stopping;
    expect([snapshot.value.state, snapshot.value.turnCompleted?.terminal]).toEqual(["ended", "cancelled"]);
    expect(vue.disposers).toHaveLength(1);
    const kept = snapshot.value;
    vue.disposers[0]?.();
    const another = await runningTurn();
    void another.stop();
    expect(snapshot.value).toBe(kept);
    await another.stop();
  });

  it("Svelte: the store calls run at once, then on every change, until unsubscribed", async () => {
    const stop = await runningTurn();
    const seen: StopSnapshot["state"][] = [];
    const unsubscribe = stopStore(stop).subscribe((s) => seen.push(s.state));
    await stop.stop();
    unsubscribe();
    expect(seen).toEqual(["running", "stopping", "ended"]);
  });
});
