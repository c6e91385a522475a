/**
 * The commands a session sends for its turns: a turn's `turn/start` (its first send, or a retry
 * with the same commandId, so the host runs it once) and its one `turn/cancel` (its commandId
 * kept, so a retry after a drop is the same command).
 */
import type { MspClient } from "../client/mspClient.js";
import { MspError } from "../errors.js";
import { uuidv7 } from "@muse-code/protocol";
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
}
