/**
 * docs:check's wire examples against msp.schema.json (scripts/docs-schema.ts): a guide's quoted
 * messages, and its json blocks that are messages or name a method's params or result, must pass
 * the schema, checked with muse check's own rule. On a copy of the guides, one wrong type at a
 * time; the committed guides pass (docsCheck.test.ts).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkDocs } from "../../scripts/docs-check.js";

const root = process.cwd();
let dir: string;
let docsDir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docs-schema-"));
  docsDir = join(dir, "docs");
  cpSync(join(root, "docs"), docsDir, { recursive: true, filter: (path) => !path.includes(join("docs", "api")) });
  symlinkSync(join(root, "src"), join(dir, "src"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Replace `from` (once) on the line of docs/protocol.md that holds it; that line's number. */
function alterProtocol(from: string, to: string): number {
  const file = join(docsDir, "protocol.md");
  const lines = readFileSync(file, "utf8").split("\n");
  const at = lines.findIndex((l) => l.includes(from));
  if (at < 0) throw new Error(`${from} not in protocol.md`);
  lines[at] = (lines[at] as string).replace(from, to);
  writeFileSync(file, lines.join("\n"));
  return at + 1;
}

/** docs:check's schema problems, each from the file name on (`protocol.md:48: …`). */
function schemaProblemsOf(): string[] {
  return checkDocs({ docsDir, root })
    .problems.filter((p) => p.includes("schema rule"))
    .map((p) => p.replace(/^.*\/(?=[^/]+\.md:)/, ""));
}

describe("docs:check validates wire examples against msp.schema.json", () => {
  it("fails a quoted notification with a wrong-typed field, at its own line, naming method, path and rule", () => {
    const line = alterProtocol('\\"durationMs\\":136,', '\\"durationMs\\":\\"136\\",');
    expect(schemaProblemsOf()).toEqual([
      `protocol.md:${line}: turn/completed from the host: $.params.durationMs must be integer (schema rule "type" at msp.schema.json#/$defs/TurnCompletedParams/properties/durationMs/type)`,
    ]);
  });

  it("checks a quoted response against the request before the quote (a refusal's data)", () => {
    // transcripts/cancel-race.jsonl line 13, quoted alone: the turn/cancel it answers is line 12.
    const line = alterProtocol('\\"data\\":{\\"commandId\\":\\"01a232c0-2161-7545-89d2-bd4bd18f8969\\",', '\\"data\\":{');
    expect(schemaProblemsOf()).toEqual([
      `protocol.md:${line}: the response to turn/cancel from the host: $.error.data lacks the required field "commandId" (schema rule "required" at msp.schema.json#/$defs/RejectionData/required)`,
    ]);
  });

  it("checks json blocks that name params=<method> or result=<method>, or hold a whole message, and leaves fragments alone", () => {
    const file = join(docsDir, "schema-examples.md");
    writeFileSync(
      file,
      [
        "# examples",
        "",
        "```json params=turn/start",
        '{ "sessionId": "s", "input": [{ "type": "text", "text": 1 }] }',
        "```",
        "",
        "```json result=turn/cancel",
        '{ "commandId": "c", "status": "accepted" }',
        "```",
        "",
        "```json",
        '{ "jsonrpc": "2.0", "method": "turn/started", "params": { "sessionId": "s", "viewCursor": "1" } }',
        "```",
        "",
        "```json",
        '{ "capabilities": { "approvals": 1 } }',
        "```",
        "",
        "```json params=turn/begin",
        "{}",
        "```",
        "",
      ].join("\n"),
    );
    const problems = checkDocs({ docsDir, root }).problems.filter((p) => p.includes("schema-examples.md"));
    expect(problems.map((p) => p.replace(/^.*schema-examples\.md:/, ""))).toEqual([
      '3: turn/start from the client: $.params.input[0].text must be string (schema rule "type" at msp.schema.json#/$defs/TextInput/properties/text/type)',
      '7: the response to turn/cancel from the host: $.result lacks the required field "turnId" (schema rule "required" at msp.schema.json#/$defs/TurnCancelResult/required)',
      '11: turn/started from the host: $.params lacks the required field "turnId" (schema rule "required" at msp.schema.json#/$defs/TurnStartedParams/required)',
      "19: turn/begin is not a method of msp.schema.json (x-msp-methods)",
    ]);
  });
});
