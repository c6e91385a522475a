/// <reference lib="esnext.disposable" preserve="true" />
/**
 * The `Symbol.asyncDispose` key of `await using`, also where the runtime lacks it (older
 * browsers): then it is `Symbol.for("Symbol.asyncDispose")`, the key esbuild's and TypeScript's
 * downlevelled `await using` look up. Nothing global is patched.
 */

/** `Symbol.asyncDispose`, or the registered symbol that stands for it. */
export const asyncDispose: typeof Symbol.asyncDispose =
  (Symbol as { asyncDispose?: typeof Symbol.asyncDispose }).asyncDispose ?? (Symbol.for("Symbol.asyncDispose") as typeof Symbol.asyncDispose);
