/**
 * MspError: the one error type the SDK throws or rejects with. Discriminate on `kind`.
 */
import type { JsonValue, RejectionData } from "@muse-code/protocol";
import type { CloseInfo } from "./types/closeInfo.js";

/**
 * The kinds of {@link MspError}. What `data` holds for each (narrow on `kind` to read it):
 *
 * - `commandRejected`: the host refused the command (JSON-RPC code -32001). `data` is the
 *   wire `error.data` unchanged ({@link CommandRejectedData}): `{ commandId, reason, ...details }`.
 *   `reason` is one of `already_terminal` (with `turnId` and `terminal`), `unknown_turn`,
 *   `unknown_session`, `unknown_model`, `shutting_down`. Only `already_terminal` means "already done".
 * - `rpcError`: any other JSON-RPC error. `data` is {@link RpcErrorData} `{ code, message, data }`.
 * - `timeout`: the bounded wait ran out. `data` is {@link TimeoutData} `{ timeoutMs, method?, commandId?, turnId? }`.
 * - `aborted`: the caller's `AbortSignal` fired. `cause` is `signal.reason`; `data` is
 *   {@link AbortedData} `{ method?, commandId?, turnId? }`.
 * - `connectionClosed`: the connection closed before the answer came. `data` is
 *   {@link ConnectionClosedData} `{ reason, exitCode?, signal?, closeCode?, closeReason? }` (exit
 *   details when the host was a child process; close code and reason when it was a WebSocket).
 * - `protocol`: the host sent something MSP does not allow. `data` is {@link ProtocolData}
 *   `{ problem, message? }` where `message` is the offending message (or a prefix of its text).
 *
 * @example
 * ```ts
 * try {
 *   await client.command("host/info", {}, { timeoutMs: 5_000 });
 * } catch (e) {
 *   if (!MspError.is(e) || e.kind !== MspErrorKinds.timeout) throw e;
 *   console.log(`no answer within ${e.data.timeoutMs} ms`);
 * }
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
 *   await client.command("host/info", {}, { timeoutMs: 5_000 });
 * } catch (e) {
 *   if (!MspError.is(e)) throw e;
 *   counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
 * }
 * ```
 */
export type MspErrorKind = (typeof MspErrorKinds)[keyof typeof MspErrorKinds];

/**
 * `data` of a `commandRejected` {@link MspError}: the host's wire `error.data`, unchanged
 * (`{ commandId, reason, ...details }`; `unknown_model` adds `available`, for instance).
 *
 * @example
 * ```ts
 * if (e instanceof MspError && e.kind === "commandRejected") {
 *   const data: CommandRejectedData = e.data;
 *   if (data.reason === "already_terminal") console.log(`turn ${data.turnId} already ended: ${data.terminal}`);
 * }
 * ```
 */
export type CommandRejectedData = RejectionData;

/**
 * `data` of an `rpcError` {@link MspError}: the JSON-RPC error as the host sent it.
 *
 * @example
 * ```ts
 * if (e instanceof MspError && e.kind === "rpcError") console.log(e.data.code, e.data.message, e.data.data);
 * ```
 */
export interface RpcErrorData {
  /** The JSON-RPC error code, e.g. -32601 (method not found). */
  code: number;
  /** The host's error message. */
  message: string;
  /** The error's `data`, or `null` when it had none. */
  data: JsonValue;
}

/**
 * `data` of an `aborted` {@link MspError}: what was being waited for.
 *
 * @example
 * ```ts
 * if (e instanceof MspError && e.kind === "aborted") console.log(`stopped waiting for ${e.data.method ?? e.data.turnId}`);
 * ```
 */
export interface AbortedData {
  /** The command waited for, when it was one. */
  method?: string;
  /** That command's `commandId`, when known. */
  commandId?: string;
  /** The turn whose terminal was waited for, when it was one. */
  turnId?: string;
}

/**
 * `data` of a `timeout` {@link MspError}: what was waited for, and for how long.
 *
 * @example
 * ```ts
 * if (e instanceof MspError && e.kind === "timeout") console.log(`${e.data.method ?? "wait"}: no answer in ${e.data.timeoutMs} ms`);
 * ```
 */
export interface TimeoutData extends AbortedData {
  /** The bound that ran out. @unit milliseconds */
  timeoutMs: number;
}

/**
 * `data` of a `connectionClosed` {@link MspError}: why the connection closed, the same
 * {@link CloseInfo} that `client.closed` resolves with.
 *
 * @example
 * ```ts
 * if (e instanceof MspError && e.kind === "connectionClosed") console.log(e.data.reason, e.data.exitCode ?? e.data.signal ?? e.data.closeCode);
 * ```
 */
export type ConnectionClosedData = CloseInfo;

/**
 * `data` of a `protocol` {@link MspError}: what the host got wrong.
 *
 * @example
 * ```ts
 * client.events.on("protocolError", (e) => console.warn(e.data.problem, JSON.stringify(e.data.message)));
 * ```
 */
export interface ProtocolData {
  /** One sentence saying what is wrong. */
  problem: string;
  /** The offending message, or a prefix of its text (`null` when there was none to show). */
  message?: JsonValue;
  /** When the host speaks an MSP this SDK cannot follow: the `protocolVersion` its `host/info` gave. */
  hostVersion?: string;
  /** When the host speaks an MSP this SDK cannot follow: the version this SDK speaks (`PROTOCOL_VERSION`). */
  sdkVersion?: string;
}

/**
 * The `data` type of each {@link MspErrorKind}.
 *
 * @example
 * ```ts
 * function detailsOf<K extends MspErrorKind>(e: MspError<K>): MspErrorDataMap[K] {
 *   return e.data;
 * }
 * ```
 */
export interface MspErrorDataMap {
  commandRejected: CommandRejectedData;
  rpcError: RpcErrorData;
  timeout: TimeoutData;
  aborted: AbortedData;
  connectionClosed: ConnectionClosedData;
  protocol: ProtocolData;
}

/**
 * An {@link MspError} of any one kind: a union discriminated on `kind`, so checking `kind`
 * narrows `data`. `MspError.is(x)` and `x instanceof MspError` narrow to it.
 *
 * @example
 * ```ts
 * function describe(e: AnyMspError): string {
 *   return e.kind === "commandRejected" ? `refused: ${e.data.reason}` : e.message;
 * }
 * ```
 */
export type AnyMspError = { [K in MspErrorKind]: MspError<K> }[MspErrorKind];

const BRAND = Symbol.for("@muse-code/sdk/MspError");

/**
 * The one error class of `@muse-code/sdk`. `kind` says exactly what happened; `data` holds
 * the details for that kind (see {@link MspErrorKinds}). An abort is never reported as a timeout.
 * `instanceof MspError` and `MspError.is` narrow to {@link AnyMspError}, so `kind` narrows `data`.
 *
 * @example
 * ```ts
 * try {
 *   await msp.command("turn/cancel", { sessionId, turnId });
 * } catch (error) {
 *   if (error instanceof MspError && error.kind === "commandRejected" && error.data["reason"] === "already_terminal") {
 *     // the turn finished first: read its terminal
 *   } else throw error;
 * }
 * ```
 */
export class MspError<K extends MspErrorKind = MspErrorKind> extends Error {
  /** What happened. */
  readonly kind: K;
  /** Details for this kind; see {@link MspErrorKinds}. Check `kind` first to read them typed. */
  readonly data: MspErrorDataMap[K];

  constructor(kind: K, message: string, data: MspErrorDataMap[K], options?: { cause?: unknown }) {
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
  static is(value: unknown): value is AnyMspError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** `instanceof MspError` holds across bundles and copies of this package too (ESM and CJS), and narrows like {@link MspError.is}. */
  static override [Symbol.hasInstance](value: unknown): value is AnyMspError {
    return MspError.is(value);
  }

  /**
   * True when this is the host's `already_terminal` rejection: the turn had already reached
   * its terminal, so the thing a cancel wanted is already true.
   *
   * @example
   * ```ts
   * if (MspError.is(e) && e.isAlreadyTerminal()) return client.turns.get(turnId);
   * ```
   */
  isAlreadyTerminal(): boolean {
    return this.kind === MspErrorKinds.commandRejected && (this.data as Partial<CommandRejectedData>).reason === "already_terminal";
  }
}
