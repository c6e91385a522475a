/** Test helper for the muse CLI: NDJSON text (`muse --json`'s stdout, a `--record` transcript) parsed. */

/** Each line of `text` (a final newline ignored) parsed as JSON, typed `T` on the caller's word. */
export function jsonLines<T = Record<string, unknown>>(text: string): T[] {
  return text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as T);
}
