/** Tests of parseJsonText: a JSON syntax error is reported as file:line:column with what was wrong. */
import { describe, expect, it } from "vitest";
import { parseJsonText } from "../../packages/host/src/model/jsonSyntax.js";

function errorOf(text: string): string {
  try {
    parseJsonText(text, "m.json");
  } catch (error) {
    expect(error).toBeInstanceOf(SyntaxError);
    return (error as Error).message;
  }
  throw new Error(`parsed: ${text}`);
}

describe("parseJsonText", () => {
  it("parses valid JSON like JSON.parse, a leading byte-order mark included", () => {
    expect(parseJsonText('{"a":[1,-2.5e3,true,null,"x\\u00e9"]}', "m.json")).toEqual({ a: [1, -2500, true, null, "xé"] });
    expect(parseJsonText('\uFEFF{"a":1}', "m.json")).toEqual({ a: 1 });
  });

  it("locates every kind of syntax error, 1-based, columns counted in characters", () => {
    const cases: Array<[string, string]> = [
      ['{\n  "a": 1\n  "b": 2\n}', "m.json:3:3: invalid JSON: expected ',' or '}' after a property value, found '\"'"],
      ["[1,]", "m.json:1:4: invalid JSON: unexpected ']' after ',': JSON allows no trailing comma"],
      ['{"a": tru}', "m.json:1:7: invalid JSON: expected a value, found 't'"],
      ['{"turns": [', "m.json:1:12: invalid JSON: expected a value, found end of input"],
      ["", "m.json:1:1: invalid JSON: expected a value, found end of input"],
      ['{"a": "x\n"}', 'm.json:1:9: invalid JSON: unescaped control character "\\n" in a string'],
      ['{"a": "x', "m.json:1:7: invalid JSON: unterminated string"],
      ['{"a": "\\q"}', "m.json:1:8: invalid JSON: invalid escape \\q in a string"],
      ['{"a": "\\u12"}', "m.json:1:8: invalid JSON: \\u needs four hex digits"],
      ["{'a': 1}", "m.json:1:2: invalid JSON: expected a property name in double quotes, found '''"],
      ["[01]", "m.json:1:3: invalid JSON: expected ',' or ']' after an array element, found '1'"],
      ["[1.]", "m.json:1:4: invalid JSON: expected a digit after the decimal point, found ']'"],
      ["[-]", "m.json:1:3: invalid JSON: expected a digit in a number, found ']'"],
      ["[1e]", "m.json:1:4: invalid JSON: expected a digit in the exponent, found ']'"],
      ['{"a" 1}', "m.json:1:6: invalid JSON: expected ':' after the property name, found '1'"],
      ["{} x", "m.json:1:4: invalid JSON: unexpected 'x' after the JSON value"],
      ["[ // note\n1]", "m.json:1:3: invalid JSON: unexpected '/': JSON has no comments"],
      ["['a']", 'm.json:1:2: invalid JSON: unexpected "\'": JSON strings use double quotes'],
      ['["😀😀", x]', "m.json:1:8: invalid JSON: expected a value, found 'x'"],
      ['\uFEFF\n {"a":}', "m.json:2:7: invalid JSON: expected a value, found '}'"],
    ];
    for (const [text, message] of cases) expect(errorOf(text), JSON.stringify(text)).toBe(message);
  });

  it("falls back to V8's message (still naming the file) when nesting is too deep to scan", () => {
    const deep = `${"[".repeat(200_000)}x`;
    expect(errorOf(deep)).toMatch(/^m\.json(:\d+:\d+)?: invalid JSON: /);
  });
});
