/**
 * The status line: one `role="status"` (aria-live polite) region that says what just changed
 * (connected, running, stopping, cancelled and why, reconnecting and why, reconnected). Screen
 * readers read each new line; a sighted user sees the latest.
 */
export class Announcer {
  readonly #region: HTMLElement;
  #last = "";

  constructor(region: HTMLElement) {
    this.#region = region;
  }

  /** Show and announce `text` (a repeat of the current line is not re-announced). */
  say(text: string, tone: "info" | "error" = "info"): void {
    if (text === this.#last) return;
    this.#last = text;
    this.#region.textContent = text;
    this.#region.dataset["tone"] = tone;
  }
}
