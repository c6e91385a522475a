/**
 * The commands a session sends for its turns: a turn's `turn/start` (its first send, or a retry
 * with the same commandId, so the host runs it once) and its one `turn/cancel` (its commandId
 * kept, so a retry after a drop is the same command).
 */
import type { MspClient } from "../client/mspClient.js";
import { MspError } from "../errors.js";
import type { WaitOptions } from "../types/waitOptions.js";
import { uuidv7, type CommandResult, type TurnInput } from "@muse-code/protocol";
import { touch, type SessionTurns, type TurnState } from "./sessionTurns.js";

/** What the turn commands need of the session. */
export interface TurnCommandsHost {
  readonly turns: SessionTurns;
  /** Bounds each command. @unit milliseconds */
  readonly commandTimeoutMs: number;
  sessionId(): string | undefined;
  /** `client` is the session's current connection. */
  isCurrent(client: MspClient): boolean;
  isClosed(): boolean;
  /** What the snapshot shows changed; `now` writes the session at once. */
  changed(now?: boolean): void;
  /** A new snapshot for the listeners, without a write. */
  notify(): void;
  onWarning(message: string): void;
}

/** A session's turn commands; see the module header. */
export class TurnCommands {
  readonly #host: TurnCommandsHost;

  constructor(host: TurnCommandsHost) {
    this.#host = host;
  }

  /** `turn/start` for `turn` (first time, or a retry with the same commandId: the host runs it once). */
  async start(client: MspClient, turn: TurnState): Promise<void> {
    const sessionId = this.#host.sessionId() as string;
    turn.startPendingOn = client;
    try {
      const ack = await client.command(
        "turn/start",
        { sessionId, commandId: turn.turnId, input: turn.input ?? [] },
        { timeoutMs: this.#host.commandTimeoutMs },
      );
      if (turn.startPendingOn === client) turn.startPendingOn = undefined;
      if (ack.disposition === "queued") this.#host.turns.advance(turn.turnId, "queued");
      else this.#host.turns.advance(turn.turnId, "running");
      this.#host.changed();
      if (turn.stopRequested && this.#host.isCurrent(client)) void this.cancel(client, turn);
    } catch (error) {
      if (turn.startPendingOn === client) turn.startPendingOn = undefined;
      if (!this.#host.isCurrent(client) || !MspError.is(error)) return; // a drop: retried after the reconnect
      // No answer in time: the same commandId again (the host runs it once); a Stop waiting on the ack goes with it.
      if (error.kind === "timeout" && !this.#host.isClosed()) return void this.start(client, turn);
      if (error.kind !== "commandRejected" && error.kind !== "rpcError") return;
      if (turn.phase !== "starting") return; // accepted earlier: the host has it
      turn.phase = "unknown";
      turn.unknownReason = `the host refused turn/start: ${error.message}`;
      touch(turn);
      this.#host.changed(true);
    }
  }

  /** The turn's one `turn/cancel` (its commandId kept, so a retry after a drop is the same command). */
  async cancel(client: MspClient, turn: TurnState): Promise<void> {
    if (turn.cancelAccepted || turn.cancelPendingOn === client || turn.phase === "ended") return;
    const sessionId = this.#host.sessionId() as string;
    turn.cancelCommandId ??= uuidv7();
    turn.cancelPendingOn = client;
    touch(turn);
    this.#host.notify();
    try {
      await client.command("turn/cancel", { sessionId, turnId: turn.turnId, commandId: turn.cancelCommandId }, { timeoutMs: this.#host.commandTimeoutMs });
      turn.cancelAccepted = true;
    } catch (error) {
      if (MspError.is(error) && error.isAlreadyTerminal())
        turn.cancelAccepted = true; // lost the race: the terminal is on its way
      else if (this.#host.isCurrent(client) && MspError.is(error) && error.kind === "commandRejected") {
        this.#host.onWarning(`turn/cancel of turn ${turn.turnId} was refused: ${error.message}`);
      }
    } finally {
      if (turn.cancelPendingOn === client) turn.cancelPendingOn = undefined;
      touch(turn);
      this.#host.notify();
    }
  }

  /** `turn/steer` on `client`, the open connection (undefined when there is none: the session reads `state`). */
  steer(
    client: MspClient | undefined,
    state: string,
    turnId: string,
    input: string | readonly TurnInput[],
    options: WaitOptions,
  ): Promise<CommandResult<"turn/steer">> {
    const parts = typeof input === "string" ? [{ type: "text" as const, text: input }] : [...input];
    if (parts.every((part) => part.text === "")) throw new TypeError("steer: input must have some text (an empty text steers nothing)");
    const sessionId = this.#host.sessionId();
    if (client === undefined || sessionId === undefined) {
      throw new MspError("connectionClosed", `steer: the session is ${state}; steering is sent only on a live connection`, {
        reason: `the session is ${state}`,
      });
    }
    return client.command("turn/steer", { sessionId, turnId, input: parts }, options);
  }

  /** Right after a resume's answer: each stopped turn the host has gets its kept `turn/cancel` (a question it already asked again sent it). */
  keptStops(client: MspClient): void {
    for (const turn of this.#host.turns.unended()) if (turn.stopRequested && turn.phase !== "starting") void this.cancel(client, turn);
  }

  /** The session is open on `client`: each unended turn is re-attached (its `turn/start` again), and a stopped one the host has gets its cancel instead. */
  reattach(client: MspClient): void {
    for (const turn of this.#host.turns.unended()) {
      if (turn.stopRequested && turn.phase !== "starting") void this.cancel(client, turn);
      else if (turn.input !== undefined) void this.start(client, turn);
      else if (turn.stopRequested) void this.cancel(client, turn);
    }
  }
}
