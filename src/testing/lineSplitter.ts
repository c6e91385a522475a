/**
 * lineSplitter: turn a byte stream into its non-blank text lines, decoding UTF-8 across chunk
 * boundaries and dropping a trailing `\r`. The testing fixtures read NDJSON with it.
 */

/** Options of {@link lineSplitter}. */
export interface LineSplitterOptions {
  /** Longest unterminated line kept before `onOverflow` is called and the rest dropped. @unit UTF-16 code units */
  maxPending?: number;
  onOverflow?: () => void;
}

/** Returns a feeder: call it with each chunk; `onLine` gets every complete, non-blank line. */
export function lineSplitter(onLine: (line: string) => void, options: LineSplitterOptions = {}): (chunk: Uint8Array) => void {
  const decoder = new TextDecoder();
  let buffer = "";
  return (chunk) => {
    buffer += decoder.decode(chunk, { stream: true });
    let at = buffer.indexOf("\n");
    while (at >= 0) {
      const line = buffer.slice(0, at).replace(/\r$/, "");
      buffer = buffer.slice(at + 1);
      if (line.trim() !== "") onLine(line);
      at = buffer.indexOf("\n");
    }
    if (options.maxPending !== undefined && buffer.length > options.maxPending) {
      buffer = "";
      options.onOverflow?.();
    }
  };
}
