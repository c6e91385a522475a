/**
 * MspError: the one error type the SDK throws or rejects with. Discriminate on `kind`.
 */
import type { JsonValue } from "./protocol/index.js";

/**
 * The kinds of {@link MspError}. What `data` holds for each:
 *
 * - `commandRejected`: the host refused the command (JSON-RPC code -32001). `data` is the
 *   wire `error.data` unchanged: `{ commandId, reason, ...details }`. `reason` is one of
 *   `already_terminal` (with `turnId` and `terminal`), `unknown_turn`, `unknown_session`,
 *   `unknown_model`, `shutting_down`. Only `already_terminal` means "already done".
 * - `rpcError`: any other JSON-RPC error. `data` is `{ code, message, data }`.
 * - `timeout`: the bounded wait ran out. `data` is `{ timeoutMs, method?, turnId? }`.
 * - `aborted`: the caller's `AbortSignal` fired. `cause` is `signal.reason`; `data` is `{ method?, turnId? }`.
 * - `connectionClosed`: the connection closed before the answer came. `data` is
 *   `{ exitCode?, signal?, reason? }` (exit details when the host was a child process).
 * - `protocol`: the host sent something MSP does not allow. `data` is `{ problem, message? }`
 *   where `message` is the offending message (or a prefix of its text).
 *
 * @example
 * ```ts
 * if (MspError.is(e) && e.kind === MspErrorKinds.timeout) retry();
 * ```
 */
export const MspErrorKinds = {
  commandRejected: "commandRejected",
  rpcError: "rpcError",
  timeout: "timeout",
  aborted: "aborted",
  connectionClosed: "connectionClosed",
  protocol: "protocol",
} as const;

/**
 * One of {@link MspErrorKinds}.
 *
 * @example
 * ```ts
 * const counts = new Map<MspErrorKind, number>();
 * try {
 *   await client.connection.command("host/info", {}, { timeoutMs: 5_000 });
 * } catch (e) {
 *   if (!MspError.is(e)) throw e;
 *   counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
 * }
 * ```
 */
export type MspErrorKind = (typeof MspErrorKinds)[keyof typeof MspErrorKinds];

const BRAND = Symbol.for("@muse-code/sdk/MspError");

/**
 * The one error class of `@muse-code/sdk`. `kind` says exactly what happened; `data` holds
 * the details for that kind (see {@link MspErrorKinds}). An abort is never reported as a timeout.
 *
 * @example
 * ```ts
 * try {
 *   await msp.connection.command("turn/cancel", { sessionId, turnId });
 * } catch (error) {
 *   if (error instanceof MspError && error.kind === "commandRejected" && error.data["reason"] === "already_terminal") {
 *     // the turn finished first: read its terminal
 *   } else throw error;
 * }
 * ```
 */
export class MspError extends Error {
  /** What happened. */
  readonly kind: MspErrorKind;
  /** Details for this kind; see {@link MspErrorKinds}. Indexable as the seed page does: `error.data["reason"]`. */
  readonly data: Record<string, JsonValue | undefined>;

  constructor(kind: MspErrorKind, message: string, data: Record<string, JsonValue | undefined> = {}, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MspError";
    this.kind = kind;
    this.data = data;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * True when `value` is an `MspError`, even one created by another copy of this package
   * (another bundle, another realm).
   *
   * @example
   * ```ts
   * if (MspError.is(error) && error.kind === "aborted") return;
   * ```
   */
  static is(value: unknown): value is MspError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** `instanceof MspError` holds across bundles and copies of this package too (ESM and CJS). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return MspError.is(value);
  }

  /**
   * True when this is the host's `already_terminal` rejection: the turn had already reached
   * its terminal, so the thing a cancel wanted is already true.
   *
   * @example
   * ```ts
   * if (MspError.is(e) && e.isAlreadyTerminal()) return recorder.get(turnId);
   * ```
   */
  isAlreadyTerminal(): boolean {
    return this.kind === MspErrorKinds.commandRejected && this.data["reason"] === "already_terminal";
  }
}
