/**
 * The session's model: the one asked for at `session/create`, a `setModel` kept until the host
 * accepts it (sent again with the same commandId after a drop, so the host switches once), and
 * what the host said. Kept with the session, so a reload shows it and still sends a pending switch.
 */
import type { MspClient } from "../client/mspClient.js";
import { MspError } from "../errors.js";
import { uuidv7 } from "@muse-code/protocol";
import type { SessionModel } from "./sessionSnapshot.js";

/** The model as kept across a reload. */
export interface KeptModel {
  current?: string;
  requested?: string;
  /** The commandId of the pending `session/setModel`: a retry reuses it. */
  commandId?: string;
}

/** One session's model choice; the engine sends what it holds. */
export class SessionModelChoice {
  readonly #initial: string | undefined;
  #current: string | undefined;
  #requested: { model: string; commandId: string } | undefined;
  #refused: { model: string; message: string } | undefined;
  #pendingOn: object | undefined;
  #view: SessionModel | undefined;

  /** `initial` goes with `session/create`; `kept` is what a reload restored. */
  constructor(initial: string | undefined, kept: KeptModel | undefined) {
    this.#initial = initial;
    this.#current = kept?.current;
    if (kept?.requested !== undefined && kept.commandId !== undefined) this.#requested = { model: kept.requested, commandId: kept.commandId };
  }

  /** The params `session/create` adds: the model asked for (a pending `setModel` wins over the initial one). */
  createParams(): { model?: string } {
    const model = this.#requested?.model ?? this.#initial;
    return model === undefined ? {} : { model };
  }

  /** The host created the session with `model`: that settles any pending choice. */
  created(model: string): void {
    this.#current = model;
    this.#requested = undefined;
    this.#refused = undefined;
    this.#view = undefined;
  }

  /** Ask for `model` from the next turn on. Throws a TypeError for a name that is not a non-empty string. */
  request(model: string): void {
    if (typeof model !== "string" || model === "") throw new TypeError(`setModel: model must be a non-empty string, got ${JSON.stringify(model)}`);
    this.#requested = { model, commandId: uuidv7() };
    this.#refused = undefined;
    this.#view = undefined;
  }

  /** A `setModel` waits to be sent. */
  get pending(): boolean {
    return this.#requested !== undefined;
  }

  /**
   * Send the pending `session/setModel` on `client` (one at a time per client). Resolves true when
   * what the snapshot shows changed; a drop leaves it pending for the next connection.
   */
  async send(client: MspClient, sessionId: string, timeoutMs: number): Promise<boolean> {
    const requested = this.#requested;
    if (requested === undefined || this.#pendingOn === client) return false;
    this.#pendingOn = client;
    try {
      const result = await client.command("session/setModel", { sessionId, model: requested.model, commandId: requested.commandId }, { timeoutMs });
      if (this.#requested !== requested) return false; // asked again meanwhile: that one goes next
      this.#current = result.model;
      this.#requested = undefined;
      this.#view = undefined;
      return true;
    } catch (error) {
      if (this.#requested !== requested || !MspError.is(error) || (error.kind !== "commandRejected" && error.kind !== "rpcError")) return false;
      this.#refused = { model: requested.model, message: error.message };
      this.#requested = undefined;
      this.#view = undefined;
      return true;
    } finally {
      if (this.#pendingOn === client) this.#pendingOn = undefined;
    }
  }

  /** The frozen view, the same object until something changes. */
  view(): SessionModel {
    this.#view ??= Object.freeze({
      current: this.#current,
      requested: this.#requested?.model,
      ...(this.#refused === undefined ? {} : { refused: Object.freeze({ ...this.#refused }) }),
    });
    return this.#view;
  }

  /** What a reload needs, or undefined when there is nothing to keep. */
  kept(): KeptModel | undefined {
    if (this.#current === undefined && this.#requested === undefined) return undefined;
    const kept: KeptModel = {};
    if (this.#current !== undefined) kept.current = this.#current;
    if (this.#requested !== undefined) {
      kept.requested = this.#requested.model;
      kept.commandId = this.#requested.commandId;
    }
    return kept;
  }
}
