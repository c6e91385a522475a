/**
 * Minimal local declarations of the few React and Vue APIs the framework snippets beside this file
 * use, written from those libraries' documented signatures. This repository does not depend on
 * React or Vue: these let `npm run typecheck` check the snippets (and test/docs/frameworkSnippets.test.ts
 * run them against stand-ins with the same contracts) without installing either. In an app, the
 * real packages' types take their place.
 */
declare module "react" {
  /** React 18+: subscribe to an external store; re-render when `getSnapshot()` returns a new value. */
  export function useSyncExternalStore<T>(subscribe: (onStoreChange: () => void) => () => void, getSnapshot: () => T, getServerSnapshot?: () => T): T;
  /** The same function between renders while `deps` are unchanged. */
  export function useCallback<F extends (...args: never[]) => unknown>(callback: F, deps: readonly unknown[]): F;
}

declare module "react/jsx-runtime" {
  export namespace JSX {
    type Element = { type: unknown; props: Record<string, unknown> };
    interface IntrinsicElements {
      button: { type?: "button" | "submit"; disabled?: boolean; "aria-busy"?: boolean; onClick?: () => void; children?: unknown };
      p: { role?: string; children?: unknown };
    }
    interface ElementChildrenAttribute {
      children: unknown;
    }
  }
  export function jsx(type: unknown, props: Record<string, unknown>, key?: unknown): JSX.Element;
  export function jsxs(type: unknown, props: Record<string, unknown>, key?: unknown): JSX.Element;
  export const Fragment: unique symbol;
}

declare module "vue" {
  /** A ref whose `.value` is reactive, not deeply (Vue 3). */
  export interface ShallowRef<T> {
    value: T;
  }
  export function shallowRef<T>(value: T): ShallowRef<T>;
  /** Run `fn` when the current effect scope (a component's setup) is disposed. */
  export function onScopeDispose(fn: () => void): void;
}
