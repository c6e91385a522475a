/** The connection indicator: a dot and a word (connecting, connected, disconnected) with why. */

/** What the indicator can show. */
export type ConnectionState = "connecting" | "connected" | "disconnected";

/** Shows the connection's state in the header: `data-connection` for the dot's colour, and a word with why. */
export class ConnectionIndicator {
  readonly #root: HTMLElement;
  readonly #text: HTMLElement;

  constructor(root: HTMLElement, text: HTMLElement) {
    this.#root = root;
    this.#text = text;
  }

  /** Show `state`; `detail` (a close reason, an error) follows it in the text and the tooltip. */
  show(state: ConnectionState, detail?: string): void {
    this.#root.dataset["connection"] = state;
    const word = state === "connecting" ? "connecting…" : state;
    this.#text.textContent = detail === undefined ? word : `${word} (${detail})`;
    this.#root.title = detail ?? word;
  }
}
