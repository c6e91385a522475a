/**
 * The runtime key of `await using`: `Symbol.asyncDispose` where the runtime has it, else (older
 * browsers) `Symbol.for("Symbol.asyncDispose")`, the key esbuild's and TypeScript's downlevelled
 * `await using` look up. Nothing global is patched at runtime.
 *
 * The public type of a disposable class says `[Symbol.asyncDispose]()`; the class declares that
 * member in its type and defines the method on its prototype under this key (see MspClient).
 */

/** `Symbol.asyncDispose`, or the registered symbol that stands for it. */
export const asyncDispose: symbol = (Symbol as { asyncDispose?: symbol }).asyncDispose ?? Symbol.for("Symbol.asyncDispose");
