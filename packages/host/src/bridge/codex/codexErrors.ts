/**
 * The typed failures of talking to a Codex app-server: an error answer, an answer that does not
 * come in time, a child that exits (or never starts), a line that is not a JSON-RPC message. Each
 * carries a `kind` to switch on, and a message that says what happened in words.
 */

/** Which failure a {@link CodexBridgeError} is. */
export type CodexErrorKind = "rpc" | "timeout" | "exited" | "start" | "protocol" | "closed";

/** Any failure of the Codex app-server connection. */
export abstract class CodexBridgeError extends Error {
  abstract readonly kind: CodexErrorKind;
}

/** The app-server answered a request with a JSON-RPC error. */
export class CodexRpcError extends CodexBridgeError {
  override readonly name = "CodexRpcError";
  readonly kind = "rpc";
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
    readonly data?: unknown,
  ) {
    super(`codex app-server refused ${method}: ${rpcMessage} (${code})`);
  }
}

/** A bounded wait ran out: a request's answer, or a notification waited for. */
export class CodexTimeoutError extends CodexBridgeError {
  override readonly name = "CodexTimeoutError";
  readonly kind = "timeout";
  /** @param what - What was waited for, in words ("the answer to turn/start"). @param ms - The bound. */
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`codex app-server: no ${what} within ${ms} ms`);
  }
}

/** The app-server process exited (or was killed) while the connection was open. */
export class CodexExitedError extends CodexBridgeError {
  override readonly name = "CodexExitedError";
  readonly kind = "exited";
  constructor(
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    /** The end of what it wrote on stderr, for the reason a user reads. */
    readonly stderrTail: string,
  ) {
    super(`codex app-server exited (${signal !== null ? `signal ${signal}` : `code ${String(exitCode)}`})${stderrTail === "" ? "" : `: ${stderrTail}`}`);
  }
}

/** The app-server could not be started (no such binary, not executable, initialize refused). */
export class CodexStartError extends CodexBridgeError {
  override readonly name = "CodexStartError";
  readonly kind = "start";
}

/** The app-server wrote something that is not a JSON-RPC message: the connection is given up. */
export class CodexProtocolError extends CodexBridgeError {
  override readonly name = "CodexProtocolError";
  readonly kind = "protocol";
  constructor(
    readonly problem: string,
    /** The start of the offending line (at most 200 characters). */
    readonly excerpt: string,
  ) {
    super(`codex app-server broke the protocol: ${problem}${excerpt === "" ? "" : `: ${excerpt}`}`);
  }
}

/** The connection was closed by this side (the bridge stopped the app-server). */
export class CodexClosedError extends CodexBridgeError {
  override readonly name = "CodexClosedError";
  readonly kind = "closed";
  constructor() {
    super("codex app-server connection closed");
  }
}
