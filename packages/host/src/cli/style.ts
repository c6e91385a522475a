/** Terminal styles for `muse`'s text output: ANSI SGR sequences, or nothing when colour is off. */

/** Styling functions: each wraps text in one ANSI style, or returns it unchanged when colour is off. */
export interface Styles {
  readonly enabled: boolean;
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) => (text === "" ? text : `\u001b[${open}m${text}\u001b[${close}m`);

/** The styles, coloured or plain. */
export function styles(enabled: boolean): Styles {
  if (!enabled) {
    const same = (text: string) => text;
    return { enabled, dim: same, bold: same, red: same, green: same, yellow: same, cyan: same };
  }
  return { enabled, dim: sgr(2, 22), bold: sgr(1, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) };
}
