/**
 * Minimal local declarations of the few Vue APIs the framework snippets beside this file use,
 * written from Vue's documented signatures. This repository does not depend on Vue: these let
 * `npm run typecheck` check the snippet (and test/docs/frameworkSnippets.test.ts run it against a
 * stand-in with the same contract) without installing it. React is a dev dependency (for
 * `@muse-code/sdk/react`), so the React snippet is checked against React's own types.
 */
declare module "vue" {
  /** A ref whose `.value` is reactive, not deeply (Vue 3). */
  export interface ShallowRef<T> {
    value: T;
  }
  export function shallowRef<T>(value: T): ShallowRef<T>;
  /** Run `fn` when the current effect scope (a component's setup) is disposed. */
  export function onScopeDispose(fn: () => void): void;
}
