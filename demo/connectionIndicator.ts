/**
 * The connection indicator: a dot and a word (connecting, connected, reconnecting, disconnected)
 * with why, from the session's `connection`. The session reconnects by itself, with backoff; the
 * "Retry now" button beside it (shown while reconnecting or after the session gave up) tries at
 * once.
 */
import type { SessionConnection } from "@muse-code/sdk/session";

/** What the indicator can show (`data-connection`). */
export type ConnectionState = "connecting" | "connected" | "reconnecting" | "disconnected";

/** Shows the connection's state in the header: `data-connection` for the dot's colour, and a word with why. */
export class ConnectionIndicator {
  readonly #root: HTMLElement;
  readonly #text: HTMLElement;
  readonly #retry: HTMLButtonElement;

  constructor(root: HTMLElement, text: HTMLElement, retry: HTMLButtonElement) {
    this.#root = root;
    this.#text = text;
    this.#retry = retry;
  }

  /** Show the session's connection. */
  render(connection: SessionConnection): void {
    const { state, attempt, retryInMs, reason } = connection;
    if (state === "open") return this.show("connected");
    if (state === "connecting") return this.show("connecting");
    if (state === "reconnecting") {
      const next = retryInMs === undefined ? "trying now" : `attempt ${attempt + 1} in ${(retryInMs / 1000).toFixed(1)} s`;
      return this.show("reconnecting", reason === undefined ? next : `${next}; ${reason.message}`);
    }
    this.show("disconnected", reason?.message);
  }

  /** Show `state`; `detail` (a close reason, an error) follows it in the text and the tooltip. */
  show(state: ConnectionState, detail?: string): void {
    this.#root.dataset["connection"] = state;
    const word = state === "connecting" || state === "reconnecting" ? `${state}…` : state;
    this.#text.textContent = detail === undefined ? word : `${word} (${detail})`;
    this.#root.title = detail ?? word;
    this.#retry.hidden = state !== "reconnecting" && state !== "disconnected";
  }
}
