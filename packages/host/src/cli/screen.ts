/**
 * Screen: everything `muse` writes to stdout goes through here, so that a progress line (a spinner
 * with what it waits for, on a terminal) is erased before output and drawn again after it, and
 * text that ends mid-line is finished before another item starts.
 */

/** Where a {@link Screen} writes: stdout, or a test's sink. */
export interface ScreenStream {
  write(text: string): unknown;
  /** Width of the terminal, when it is one. @unit columns */
  readonly columns?: number;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** How often the spinner turns. @unit milliseconds */
const FRAME_MS = 80;

/**
 * The output of one `muse` run. With `progress` (a terminal), a status line with a spinner and
 * the seconds waited is kept below the output while something is awaited; without it, status is
 * never drawn and output is plain lines.
 */
export class Screen {
  readonly #out: ScreenStream;
  readonly #progress: boolean;
  #atLineStart = true;
  /** Who wrote the unfinished line, so another writer starts a new one. */
  #lineOwner: string | undefined;
  #status: string | undefined;
  #since = 0;
  #frame = 0;
  #shown = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(out: ScreenStream, options: { progress: boolean }) {
    this.#out = out;
    this.#progress = options.progress;
  }

  /** True when the last write ended a line. */
  get atLineStart(): boolean {
    return this.#atLineStart;
  }

  /** Who wrote the unfinished line (`undefined` at a line's start, or for a line with no owner). */
  get lineOwner(): string | undefined {
    return this.#lineOwner;
  }

  /**
   * Write text for `owner` (an item id, say): if another owner left a line unfinished, it is
   * finished first.
   */
  write(text: string, owner?: string): void {
    if (text === "") return;
    this.#erase();
    if (!this.#atLineStart && this.#lineOwner !== owner) this.#out.write("\n");
    this.#out.write(text);
    this.#atLineStart = text.endsWith("\n");
    this.#lineOwner = this.#atLineStart ? undefined : owner;
    this.#draw();
  }

  /** Write one whole line (finishing any unfinished one first). */
  line(text: string): void {
    this.write(`${text}\n`);
  }

  /** End `owner`'s unfinished line, if it has one. */
  endLine(owner?: string): void {
    if (!this.#atLineStart && this.#lineOwner === owner) this.write("\n", owner);
  }

  /** Show (or, with `undefined`, hide) the progress line's label. The elapsed time restarts with a new label. */
  status(label: string | undefined): void {
    if (!this.#progress) return;
    if (label !== this.#status) this.#since = Date.now();
    this.#status = label;
    if (label === undefined) {
      this.#erase();
      this.#stopTimer();
      return;
    }
    this.#timer ??= setInterval(() => {
      this.#frame = (this.#frame + 1) % FRAMES.length;
      this.#erase();
      this.#draw();
    }, FRAME_MS);
    this.#timer.unref?.();
    this.#erase();
    this.#draw();
  }

  /** Width of the terminal, when known. @unit columns */
  get columns(): number | undefined {
    return this.#out.columns;
  }

  /**
   * Make room for a line on stderr: erase the progress line (it is drawn again with the next
   * output) and end an unfinished line.
   */
  clearForError(): void {
    this.#erase();
    if (!this.#atLineStart) {
      this.#out.write("\n");
      this.#atLineStart = true;
      this.#lineOwner = undefined;
    }
  }

  /** Erase the progress line, stop its timer, and end an unfinished line. */
  close(): void {
    this.status(undefined);
    if (!this.#atLineStart) this.write("\n", this.#lineOwner);
  }

  #draw(): void {
    if (!this.#progress || this.#status === undefined || !this.#atLineStart) return;
    const seconds = ((Date.now() - this.#since) / 1000).toFixed(1);
    let text = `${FRAMES[this.#frame]} ${this.#status} ${seconds} s`;
    const width = this.#out.columns;
    if (width !== undefined && width > 1 && text.length > width - 1) text = text.slice(0, width - 1);
    this.#out.write(`\u001b[2m${text}\u001b[22m`);
    this.#shown = true;
  }

  #erase(): void {
    if (!this.#shown) return;
    this.#out.write("\r\u001b[2K");
    this.#shown = false;
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
