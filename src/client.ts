/**
 * connect() and MspClient: the front door. One call gives a connection with its recorder,
 * ledger and events already listening, before any turn can start.
 */
import type { EventEmitter } from "eventemitter3";
import { MspConnection, type CloseInfo, type MspConnectionOptions, type MspEvents } from "./connection.js";
import type { ByteChannel } from "./framing/byteChannel.js";
import { createFraming, type Framing } from "./framing/createFraming.js";
import { asyncDispose } from "./internal/asyncDispose.js";
import { uuidv7 } from "./protocol/uuidv7.js";
import type { WaitOptions } from "./internal/boundedWait.js";
import type { ApprovalHandler, TurnApprovals } from "./turns/approvals.js";
import { cancelTurnOn, type CancelOutcome, type CancelTurnParams } from "./turns/cancelTurn.js";
import type { TurnItems } from "./turns/itemLedger.js";
import { startTurn, type StartTurnParams, type TurnHandle } from "./turns/turnHandle.js";
import type { TurnTerminals } from "./turns/turnRecorder.js";

declare global {
  interface SymbolConstructor {
    /**
     * The key of an object's `await using` dispose method (explicit resource management). The
     * same declaration as TypeScript's `esnext.disposable` lib and `@types/node` make, with which it
     * merges: it lets apps whose `lib` lacks `esnext.disposable` (and that check library types)
     * compile against this package's `[Symbol.asyncDispose]()`.
     */
    readonly asyncDispose: unique symbol;
  }
}

/**
 * Options of {@link connect}.
 *
 * @example
 * ```ts
 * const client = connect(channel, { framing: "content-length", maxMessageBytes: 1024 * 1024, defaultTimeoutMs: 10_000 });
 * ```
 */
export interface ConnectOptions extends MspConnectionOptions {
  /** How messages are framed on the channel. @defaultValue "ndjson" */
  framing?: Framing;
  /** Largest message accepted. @unit bytes @defaultValue 16 MiB */
  maxMessageBytes?: number;
  /**
   * The most bytes held for a host that does not read its input. Past it the connection closes:
   * everything pending settles as `connectionClosed` with the reason "the host is not reading
   * its input: … bytes queued …". A host that reads keeps this near empty. A single message
   * larger than the bound is still sent when nothing waits.
   * @unit bytes
   * @defaultValue 64 MiB (four messages of the default `maxMessageBytes`)
   * @example
   * ```ts
   * const client = connect(channel, { maxWriteBufferBytes: 8 * 1024 * 1024 });
   * client.events.once("close", ({ reason }) => console.log(reason));
   * ```
   */
  maxWriteBufferBytes?: number;
}

/**
 * A connected MSP client: the connection plus the turn recorder, item ledger and events that
 * were listening from the first byte.
 *
 * @example
 * ```ts
 * const client = connect(channel);
 * const { sessionId } = await client.connection.command("session/create", {});
 * const turn = client.startTurn({ sessionId, input: [{ type: "text", text: "hello" }] });
 * console.log((await turn.terminal).terminal);
 * await client.close();
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the interface MspClient below types the method the static block defines
export class MspClient {
  /** The connection: `command()` and the single `onNotification()` handler. */
  readonly connection: MspConnection;

  constructor(connection: MspConnection) {
    this.connection = connection;
  }

  /** Every turn's terminal, read-only: `get(turnId)` and bounded `terminalOf(turnId)`. */
  get turns(): TurnTerminals {
    return this.connection.turns;
  }

  /** Every item of recent turns at its latest revision, read-only: `itemsOf(turnId)` and `get(turnId, itemId)`. */
  get items(): TurnItems {
    return this.connection.items;
  }

  /**
   * The host's open `tool/approve` questions, read-only: `openOf(turnId)` and `size`. Each
   * question's `answer()` answers it; `approvalAsked` and `approvalAnswered` on {@link events}
   * say when one opens and closes.
   */
  get approvals(): TurnApprovals {
    return this.connection.approvals;
  }

  /**
   * Set the single, replace-only answerer of the host's `tool/approve` questions (pass
   * `undefined` to remove it). The handler gets `(request, { signal })` and returns
   * `{ decision, reason? }` or a promise of one; every question is answered exactly once:
   * - with no handler, `deny` (reason "no approval handler");
   * - a handler that throws or rejects, `deny` with its message;
   * - `cancelled`, by the SDK itself, when the question is withdrawn first: this client cancels
   *   the turn (the answer goes before the `turn/cancel`), the turn ends, the host moves the item
   *   off `pending`, or the connection closes. `signal` then aborts, and whatever the handler
   *   returns later is ignored.
   *
   * A UI that answers from its own dialog (through `client.approvals` or
   * `StopController.answer`) installs a handler that leaves the question open:
   * `client.onApproval(() => new Promise(() => {}))`.
   *
   * @example
   * ```ts
   * const askTheUser = (question: string, signal: AbortSignal) => new Promise<boolean>((resolve) => {
   *   signal.addEventListener("abort", () => resolve(false)); // withdrawn: close the dialog
   *   resolve(confirm(question));
   * });
   * client.onApproval(async (request, { signal }) => {
   *   const allowed = await askTheUser(`Run ${request.tool} ${request.args}?`, signal);
   *   return allowed ? { decision: "approve" } : { decision: "deny", reason: "the user said no" };
   * });
   * ```
   */
  onApproval(handler: ApprovalHandler | undefined): void {
    this.connection.onApproval(handler);
  }

  /** Typed events (eventemitter3): `client.events.on("turn/completed", …)`. */
  get events(): EventEmitter<MspEvents> {
    return this.connection.events;
  }

  /** Resolves once the connection has closed, with why. */
  get closed(): Promise<CloseInfo> {
    return this.connection.closed;
  }

  /**
   * Start a turn. Returns at once with a {@link TurnHandle}; its `cancel()` is safe even before
   * the host's ack.
   *
   * @example
   * ```ts
   * const turn = client.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests" }] });
   * ```
   */
  startTurn(params: StartTurnParams, options: WaitOptions = {}): TurnHandle {
    return startTurn(this.connection, params, uuidv7, options);
  }

  /**
   * Cancel a turn by id and resolve with its real terminal; see {@link cancelTurn}.
   *
   * @example
   * ```ts
   * const { terminal } = await client.cancelTurn({ sessionId, turnId });
   * ```
   */
  cancelTurn(params: CancelTurnParams, options: WaitOptions = {}): Promise<CancelOutcome> {
    return cancelTurnOn(this.connection, params, options);
  }

  /**
   * Close the connection; every pending command and wait settles with `connectionClosed`.
   *
   * @example
   * ```ts
   * await client.close();
   * ```
   */
  close(): Promise<CloseInfo> {
    return this.connection.close();
  }

  static {
    // The `await using` method, under Symbol.asyncDispose where the runtime has it, else under
    // Symbol.for("Symbol.asyncDispose") (see internal/asyncDispose.ts). Its type is declared by the
    // interface below, so the public type reads `[Symbol.asyncDispose]()` whatever the runtime key.
    Object.defineProperty(this.prototype, asyncDispose, {
      value: async function disposeAsync(this: MspClient): Promise<void> {
        await this.close();
      },
      writable: true,
      configurable: true,
    });
  }
}

/** Supports `await using`: leaving the block closes the client. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- merges into the class: the type of the method its static block defines
export interface MspClient {
  /**
   * `await using`: leaving the block closes the client as {@link MspClient.close} does (a
   * spawned host is also stopped), even when the block throws.
   *
   * @example
   * ```ts
   * {
   *   await using client = connect(channel);
   *   await client.connection.command("host/info", {});
   * } // closed here
   * ```
   */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Connect to an MSP host over a byte channel (stdio, a socket, an in-memory pair).
 *
 * @example
 * ```ts
 * const client = connect(channel, { framing: "ndjson", defaultTimeoutMs: 30_000 });
 * ```
 */
export function connect(channel: ByteChannel, options: ConnectOptions = {}): MspClient {
  const { framing, maxMessageBytes, maxWriteBufferBytes, ...connectionOptions } = options;
  const { reader, writer } = createFraming(channel, framing, { maxMessageBytes, maxWriteBufferBytes });
  return new MspClient(new MspConnection(reader, writer, connectionOptions));
}
