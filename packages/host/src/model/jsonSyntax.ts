/**
 * JSON with a location on error: `parseJsonText` parses like `JSON.parse` but reports a syntax
 * error as `file:line:column: message`. V8's own messages carry an offset only for some errors
 * (`[1,]` has none), so on failure a small RFC 8259 scanner finds where the text stops being JSON.
 */

/** A JSON syntax error at a 0-based offset of the text (UTF-16 code units). */
interface SyntaxProblem {
  offset: number;
  problem: string;
}

class Located extends Error {
  constructor(readonly at: SyntaxProblem) {
    super(at.problem);
  }
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);

/** The first syntax error of `text`, or `undefined` when it is valid JSON. */
function findSyntaxError(text: string): SyntaxProblem | undefined {
  let i = 0;
  const shown = (at: number): string => {
    const c = text[at];
    if (c === undefined) return "end of input";
    return c >= " " && c !== "\u007f" ? `'${c}'` : JSON.stringify(c);
  };
  function fail(problem: string, offset = i): never {
    throw new Located({ offset, problem });
  }
  const skipWhitespace = () => {
    while (WHITESPACE.has(text[i] ?? "")) i++;
  };
  const string = () => {
    const start = i;
    i++; // the opening quote
    for (;;) {
      const c = text[i];
      if (c === undefined) fail("unterminated string", start);
      if (c === '"') {
        i++;
        return;
      }
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          for (let k = 2; k < 6; k++) if (!isHex(text[i + k])) fail("\\u needs four hex digits", i);
          i += 6;
        } else if (e !== undefined && ESCAPES.has(e)) {
          i += 2;
        } else {
          fail(`invalid escape \\${e ?? ""} in a string`);
        }
        continue;
      }
      if (c < " ") fail(`unescaped control character ${JSON.stringify(c)} in a string`);
      i++;
    }
  };
  const digits = (what: string) => {
    if (!isDigit(text[i])) fail(`expected a digit ${what}, found ${shown(i)}`);
    while (isDigit(text[i])) i++;
  };
  const number = () => {
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else digits("in a number");
    if (text[i] === ".") {
      i++;
      digits("after the decimal point");
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      digits("in the exponent");
    }
  };
  const value = (): void => {
    skipWhitespace();
    const c = text[i];
    if (c === "{") return object();
    if (c === "[") return array();
    if (c === '"') return string();
    if (c === "-" || isDigit(c)) return number();
    for (const literal of ["true", "false", "null"]) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    if (c === "/") fail("unexpected '/': JSON has no comments");
    if (c === "'") fail('unexpected "\'": JSON strings use double quotes');
    fail(`expected a value, found ${shown(i)}`);
  };
  const object = () => {
    i++;
    skipWhitespace();
    if (text[i] === "}") {
      i++;
      return;
    }
    for (;;) {
      skipWhitespace();
      if (text[i] === "}") fail("unexpected '}' after ',': JSON allows no trailing comma");
      if (text[i] !== '"') fail(`expected a property name in double quotes, found ${shown(i)}`);
      string();
      skipWhitespace();
      if (text[i] !== ":") fail(`expected ':' after the property name, found ${shown(i)}`);
      i++;
      value();
      skipWhitespace();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") {
        i++;
        return;
      }
      fail(`expected ',' or '}' after a property value, found ${shown(i)}`);
    }
  };
  const array = () => {
    i++;
    skipWhitespace();
    if (text[i] === "]") {
      i++;
      return;
    }
    for (;;) {
      skipWhitespace();
      if (text[i] === "]") fail("unexpected ']' after ',': JSON allows no trailing comma");
      value();
      skipWhitespace();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") {
        i++;
        return;
      }
      fail(`expected ',' or ']' after an array element, found ${shown(i)}`);
    }
  };
  try {
    value();
    skipWhitespace();
    if (i < text.length) fail(`unexpected ${shown(i)} after the JSON value`);
    return undefined;
  } catch (error) {
    if (error instanceof Located) return error.at;
    throw error;
  }
}

/** 1-based line and column (in characters) of `offset` in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  const line = before.split("\n").length;
  return { line, column: Array.from(before.slice(lineStart)).length + 1 };
}

/**
 * Parses `text` (the contents of `file`) as JSON. A leading byte-order mark is ignored. On a
 * syntax error it throws a `SyntaxError` whose message is `file:line:column: invalid JSON: …`.
 */
export function parseJsonText(text: string, file: string): unknown {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (error) {
    let found: SyntaxProblem | undefined;
    try {
      found = findSyntaxError(body);
    } catch {
      found = undefined; // nesting too deep for the scanner: fall back to V8's message
    }
    if (found === undefined) throw new SyntaxError(`${file}: invalid JSON: ${(error as Error).message}`, { cause: error });
    const { line, column } = lineAndColumn(body, found.offset);
    throw new SyntaxError(`${file}:${line}:${column}: invalid JSON: ${found.problem}`, { cause: error });
  }
}
