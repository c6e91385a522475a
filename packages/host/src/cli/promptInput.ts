/**
 * PromptInput: the answers to `muse run`'s y/N questions, read from stdin. On a terminal it reads
 * one key in raw mode (y, n, Enter, Ctrl-C); otherwise one line per question (`y` or `yes` is
 * yes, anything else no), keeping what follows for the next question. Between questions, a
 * listener ({@link PromptInput.listen}) gets each whole line typed (steering): a line read while a
 * question is open answers it and never reaches the listener.
 */

/**
 * What one question got: `yes`, `no`, `always` (a: approve for this session), `stop` (s: deny and
 * stop the turn), `interrupt` (Ctrl-C at the prompt, read as a key in raw mode, where the terminal
 * sends no SIGINT), `ended` (stdin closed first), or `withdrawn` (the caller's signal aborted
 * first). The caller reads `always` and `stop` as `no` when its question did not offer them.
 */
export type PromptKey = "yes" | "no" | "always" | "stop" | "interrupt" | "ended" | "withdrawn";

/** The stdin `muse` reads answers from: a TTY (with `setRawMode`) or a pipe or file. */
export interface PromptStream {
  readonly isTTY?: boolean;
  setRawMode?(raw: boolean): unknown;
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  off(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  off(event: "end", listener: () => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** Most bytes of one answer line kept; a longer line is read as "no". @unit characters */
const MAX_LINE = 1_024;

/** Longest line a {@link PromptInput.listen} listener gets; a longer one is reported as too long, not cut. @unit characters */
export const MAX_TYPED_LINE = 16_384;
/**
 * Raw mode: how long after raw mode begins the question is shown. What arrives before is what the
 * terminal held of a line half-typed before the question (handed over as raw mode begins), never
 * a key press answering it. @unit milliseconds
 */
const HALF_TYPED_MS = 100;

/**
 * A line typed between questions: its text (without the newline), or, for a line longer than
 * {@link MAX_TYPED_LINE}, how long it was (it is not delivered).
 */
export type TypedLine = { text: string } | { tooLong: number };

/**
 * Reads one answer per {@link PromptInput.read}. stdin is read only while a question waits (so
 * an idle `muse` does not hold it), and raw mode is on only then.
 */
export class PromptInput {
  readonly #stdin: PromptStream;
  readonly #raw: boolean;
  /** Line mode: what was read past the last answered line. */
  #buffer = "";
  #ended = false;
  #reading = false;
  /** The listener of lines typed between questions, and whether its stdin listeners are on. */
  #listener: ((line: TypedLine) => void) | undefined;
  #listening = false;
  /** Line mode between questions: the length of an over-long line being skipped, else -1. @unit characters */
  #skipping = -1;

  constructor(stdin: PromptStream) {
    this.#stdin = stdin;
    this.#raw = stdin.isTTY === true && typeof stdin.setRawMode === "function";
  }

  /** True when a key is read in raw mode (a terminal); false when a line is read. */
  get raw(): boolean {
    return this.#raw;
  }

  /**
   * Between questions, give each whole line read from stdin (in line mode: a terminal's own line
   * editing and echo, Ctrl-C still a signal) to `onLine`; while a question is open, lines answer
   * it instead. Returns the function that stops listening (stdin is paused again). One listener at
   * a time: a second replaces the first.
   */
  listen(onLine: (line: TypedLine) => void): () => void {
    this.#listener = onLine;
    this.#startListening();
    return () => {
      if (this.#listener !== onLine) return;
      this.#listener = undefined;
      this.#stopListening();
      if (!this.#reading) this.#stdin.pause();
    };
  }

  /**
   * Read one answer, or `withdrawn` once `signal` aborts. One read at a time. `shown` is called
   * once, when the question may be shown: in raw mode {@link HALF_TYPED_MS} after raw mode begins,
   * so that what the terminal hands over of a line half-typed before the question (it arrives as
   * raw mode begins) comes before the question is on screen and is kept as the start of the next
   * typed line, never read as an answer (a half-typed "a" must not grant a session rule); at once
   * otherwise. A key pressed once the question shows is an answer.
   */
  read(signal: AbortSignal, shown: () => void = () => {}): Promise<PromptKey> {
    if (this.#reading) throw new Error("PromptInput: one question at a time");
    let isShown = false;
    const show = () => {
      if (isShown) return;
      isShown = true;
      shown();
    };
    const now = (key: PromptKey) => {
      show();
      return Promise.resolve(key);
    };
    if (signal.aborted) return now("withdrawn");
    const fromBuffer = this.#raw ? undefined : this.#takeLine();
    if (fromBuffer !== undefined) return now(fromBuffer);
    if (this.#ended) return now("ended");
    this.#reading = true;
    // The question reads stdin now: lines typed while it is open answer it and never steer.
    this.#stopListening();
    return new Promise<PromptKey>((resolve) => {
      let showing: ReturnType<typeof setTimeout> | undefined;
      const finish = (key: PromptKey) => {
        clearTimeout(showing);
        show();
        this.#stdin.off("data", onData);
        this.#stdin.off("end", onEnd);
        signal.removeEventListener("abort", onAbort);
        if (this.#raw) this.#stdin.setRawMode?.(false);
        this.#stdin.pause();
        this.#reading = false;
        this.#startListening();
        resolve(key);
      };
      const onData = (chunk: Buffer | string) => {
        const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
        if (this.#raw) {
          // What the terminal hands over as raw mode begins is a line half-typed before the
          // question opened, never an answer (a half-typed "a" must not grant a session rule):
          // it is kept as the start of the next typed line.
          if (!isShown) {
            this.#buffer += text;
            return;
          }
          // One key press is one character. A longer chunk is not an answer: an escape sequence
          // (an arrow key's "\u001b[A" would read as a) or a paste.
          if ([...text].length !== 1) return;
          const key = keyOf(text);
          if (key !== undefined) finish(key);
          return;
        }
        this.#buffer += text;
        const line = this.#takeLine();
        if (line !== undefined) finish(line);
        else if (this.#buffer.length > MAX_LINE) {
          this.#buffer = "";
          finish("no");
        }
      };
      const onEnd = () => {
        this.#ended = true;
        const rest = this.#buffer;
        this.#buffer = "";
        finish(rest.trim() === "" ? "ended" : answerOf(rest));
      };
      const onAbort = () => finish("withdrawn");
      this.#stdin.on("data", onData);
      this.#stdin.on("end", onEnd);
      signal.addEventListener("abort", onAbort, { once: true });
      if (this.#raw) {
        this.#stdin.setRawMode?.(true);
        showing = setTimeout(show, HALF_TYPED_MS);
      } else show();
      this.#stdin.resume();
    });
  }

  /** Leave the terminal as it was (raw mode off) and stop reading. */
  close(): void {
    if (this.#raw && this.#reading) this.#stdin.setRawMode?.(false);
    this.#listener = undefined;
    this.#stopListening();
    this.#stdin.pause();
  }

  /** Between questions, with a listener: read lines (line mode, never raw) and hand them over. */
  #startListening(): void {
    if (this.#listener === undefined || this.#listening || this.#reading || this.#ended) return;
    this.#listening = true;
    this.#stdin.on("data", this.#onTyped);
    this.#stdin.on("end", this.#onTypedEnd);
    this.#stdin.resume();
    this.#deliverLines(); // lines already read past the last answer
  }

  #stopListening(): void {
    if (!this.#listening) return;
    this.#listening = false;
    this.#stdin.off("data", this.#onTyped);
    this.#stdin.off("end", this.#onTypedEnd);
  }

  readonly #onTyped = (chunk: Buffer | string): void => {
    this.#buffer += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    this.#deliverLines();
  };

  readonly #onTypedEnd = (): void => {
    this.#ended = true;
    this.#stopListening();
    // A last line without its newline is still a line.
    if (this.#buffer !== "") this.#buffer += "\n";
    this.#deliverLines();
  };

  /** Hand each whole line in the buffer to the listener; an over-long line is skipped up to its newline and reported once. */
  #deliverLines(): void {
    for (;;) {
      const listener = this.#listener;
      if (listener === undefined || this.#reading) return;
      const at = this.#buffer.indexOf("\n");
      if (at < 0) {
        if (this.#buffer.length > MAX_TYPED_LINE) {
          this.#skipping = Math.max(this.#skipping, 0) + this.#buffer.length;
          this.#buffer = "";
        }
        return;
      }
      const line = this.#buffer.slice(0, at).replace(/\r$/, "");
      this.#buffer = this.#buffer.slice(at + 1);
      if (this.#skipping >= 0 || line.length > MAX_TYPED_LINE) {
        const length = Math.max(this.#skipping, 0) + line.length;
        this.#skipping = -1;
        listener({ tooLong: length });
      } else listener({ text: line });
    }
  }

  /** Line mode: the next whole line's answer, if one is buffered. */
  #takeLine(): PromptKey | undefined {
    const at = this.#buffer.indexOf("\n");
    if (at < 0) return undefined;
    const line = this.#buffer.slice(0, at);
    this.#buffer = this.#buffer.slice(at + 1);
    return answerOf(line);
  }
}

/** A typed line's answer: `y` or `yes` (any case) is yes, `a` or `always` always, `s` or `stop` stop; anything else no. */
function answerOf(line: string): PromptKey {
  if (/^\s*a(lways)?\s*$/i.test(line)) return "always";
  if (/^\s*s(top)?\s*$/i.test(line)) return "stop";
  return /^\s*y(es)?\s*$/i.test(line) ? "yes" : "no";
}

/** A key's answer in raw mode (one character): y; a (always); s (stop); n, Enter or Ctrl-D (no); Ctrl-C; other keys are ignored. */
function keyOf(text: string): PromptKey | undefined {
  for (const char of text) {
    if (char === "\u0003") return "interrupt";
    if (char === "y" || char === "Y") return "yes";
    if (char === "a" || char === "A") return "always";
    if (char === "s" || char === "S") return "stop";
    if (char === "n" || char === "N" || char === "\r" || char === "\n" || char === "\u0004") return "no";
  }
  return undefined;
}
