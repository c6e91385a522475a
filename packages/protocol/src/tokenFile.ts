/**
 * The token file `muse --token-file` and `muse-host serve --ws --token-file` share: one rule, read
 * alike by both, so a file that works for one works for the other. No I/O here (protocol/ is
 * browser-safe): each side reads the file's text and hands it to {@link tokenFromFile}.
 */

/**
 * A token file that holds no token: every line is empty (or only whitespace) or a `#` comment.
 * Its message names the file and never holds any of the file's content.
 *
 * @example
 * ```ts
 * try {
 *   tokenFromFile("# nothing yet\n", "token.txt");
 * } catch (error) {
 *   if (error instanceof TokenFileError) console.error(error.message); // --token-file token.txt: no token in it (...)
 * }
 * ```
 */
export class TokenFileError extends Error {
  /** The token file, as it was named on the command line. */
  readonly file: string;

  constructor(file: string) {
    super(`--token-file ${file}: no token in it (every line is empty or a # comment)`);
    this.name = "TokenFileError";
    this.file = file;
  }
}

/**
 * The token in a token file's text: its first line that, with the whitespace around it removed,
 * is not empty and does not start with `#`; that line, trimmed. Lines end with LF or CRLF; a
 * leading byte-order mark is whitespace. Spaces inside the token are kept. Throws a
 * {@link TokenFileError} naming `file` when there is no such line.
 *
 * @param text - The file's whole content, decoded as UTF-8.
 * @param file - The file's name, for the error only.
 * @returns The token: non-empty, no surrounding whitespace.
 *
 * @example
 * ```ts
 * import { tokenFromFile } from "@muse-code/sdk/node";
 *
 * // The text of a token file (read by the caller: this function does no I/O)
 * const token = tokenFromFile("# muse-host token\r\n  s3cret-token  \r\n", "token.txt"); // "s3cret-token"
 * ```
 */
export function tokenFromFile(text: string, file: string): string {
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed !== "" && !trimmed.startsWith("#")) return trimmed;
  }
  throw new TokenFileError(file);
}
