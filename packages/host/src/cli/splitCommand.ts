/** splitCommand: the words of a `--spawn "CMD ARGS…"` string, split as a POSIX shell splits them (quotes and backslashes only). */

/**
 * Split a command line into words: whitespace separates words; `'…'` keeps everything literally;
 * `"…"` keeps everything but `\"`, `\\`, `` \` `` and `\$`, which lose their backslash; outside
 * quotes a backslash keeps the next character. No variables, globs or operators: the command is
 * run directly, not by a shell (wrap it in `sh -c '…'` for those). Throws an `Error` with a
 * one-line message on an unterminated quote or a trailing backslash.
 */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error("unterminated ' quote");
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      inWord = true;
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        const d = line[j] as string;
        if (d === "\\" && j + 1 < line.length && '"\\$`'.includes(line[j + 1] as string)) {
          word += line[j + 1];
          j++;
        } else word += d;
      }
      if (j >= line.length) throw new Error('unterminated " quote');
      i = j;
    } else if (c === "\\") {
      if (i + 1 >= line.length) throw new Error("trailing backslash");
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}
