/**
 * A text that grows at its end (a streamed message, a tool's output), shown as blocks of about
 * {@link SEGMENT_CHARS} code units, each cut just after a line break. An append goes into the
 * last block; nodes already shown are never replaced.
 *
 * Why blocks and not one Text node: Chromium lays out a paragraph (an inline formatting context)
 * whole, and a change to any text in it after a layout costs time in proportion to the whole
 * paragraph. Measured in the headless Chromium of the browser tests (one run, on a busy 2-core
 * machine, so the ratios matter more than the times), a text of ~77 000 code units in 96-unit
 * appends with a layout between them: `Text.appendData` on one node ~30 ms per append and
 * ~115 ms per layout at the end; setting `textContent` whole ~0.9 ms and ~135 ms; these blocks
 * ~0.6 ms and ~4 ms, flat from the first append to the last. The blocks render the same
 * as one paragraph (a line break at the end of a block adds no empty line), and a cut only after
 * a line break never separates the halves of a surrogate pair. A text with no line break stays
 * one block.
 */

/** Code units after which a block ends at the next line break. @unit UTF-16 code units */
export const SEGMENT_CHARS = 2048;

/** The text inside `box` (an element that holds nothing else), as blocks it appends to. */
export class SegmentedText {
  readonly #box: HTMLElement;
  /** The last block's text node, which appends go to, unless it is closed. */
  #tail: Text | undefined;
  /** The last block holds SEGMENT_CHARS or more and ends with a line break: the next append starts a block. */
  #closed = false;

  constructor(box: HTMLElement) {
    this.#box = box;
  }

  /** Show `text` in place of what is shown (nothing changes when it is the same text). */
  set(text: string): void {
    if (this.#box.textContent === text) return;
    this.#box.replaceChildren();
    this.#tail = undefined;
    this.append(text);
  }

  /** Add `data` at the end: to the last block, and to new blocks past the ends of lines once a block is full. */
  append(data: string): void {
    let rest = data;
    while (rest !== "") {
      if (this.#tail === undefined || this.#closed) {
        const block = document.createElement("span");
        block.className = "segment";
        this.#tail = document.createTextNode("");
        block.append(this.#tail);
        this.#box.append(block);
        this.#closed = false;
      }
      // Up to the first line break at or past the block's size; what follows goes on in a new block.
      const end = rest.indexOf("\n", Math.max(0, SEGMENT_CHARS - 1 - this.#tail.length));
      if (end === -1) return this.#tail.appendData(rest);
      this.#tail.appendData(rest.slice(0, end + 1));
      this.#closed = true;
      rest = rest.slice(end + 1);
    }
  }
}
