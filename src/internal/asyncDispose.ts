/**
 * The `Symbol.asyncDispose` key of `await using`, also where the runtime lacks it (older
 * browsers): then it is `Symbol.for("Symbol.asyncDispose")`, the key esbuild's and TypeScript's
 * downlevelled `await using` look up. Nothing global is patched at runtime.
 *
 * The type declaration below is the one `@types/node` also makes: it lets apps whose `lib` lacks
 * `esnext.disposable` (and that check library types) compile against this package. It merges
 * with TypeScript's own declaration where that lib is present.
 */

declare global {
  interface SymbolConstructor {
    /** The key of an object's `await using` dispose method (explicit resource management). */
    readonly asyncDispose: unique symbol;
  }
}

/** `Symbol.asyncDispose`, or the registered symbol that stands for it. */
export const asyncDispose: typeof Symbol.asyncDispose =
  (Symbol as { asyncDispose?: typeof Symbol.asyncDispose }).asyncDispose ?? (Symbol.for("Symbol.asyncDispose") as typeof Symbol.asyncDispose);
