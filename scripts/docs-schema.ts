/**
 * docs:check's wire examples against msp.schema.json: the messages a guide shows are checked with
 * the rule `muse check` uses on a live wire (packages/host/src/cli/check/schemaCheck.ts), so an
 * example cannot show a message the schema refuses. docs/protocol.md ("The schema") states it:
 *
 * - a `jsonl` block (a quote of a transcript): every line is one recorded message. A request or a
 *   notification is checked against its method's params; a response against the result (or a
 *   refusal's data) of the request it answers, found by id in the quoted transcript up to it, so a
 *   quote may begin after the request;
 * - a `json` block whose info string names `params=<method>` or `result=<method>` holds that
 *   method's params or result;
 * - a `json` block holding an object with `"jsonrpc"` is a whole message (a response on its own is
 *   checked as a JSON-RPC response only: there is no request to name its method);
 * - any other `json` block (a directive, a script, a fragment of a message) is not a message and is
 *   not checked.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { WireLine } from "../packages/host/src/cli/check/checkWire.js";
import { schemaProblems } from "../packages/host/src/cli/check/schemaCheck.js";

/** A fenced block, as docs-check.ts finds it. */
interface DocBlock {
  line: number;
  lang: string;
  attrs: ReadonlyMap<string, string>;
  start: number;
  end: number;
}

/** What this module reads of msp.schema.json: each method's kind. */
type Methods = Record<string, { kind: "command" | "notification" | "hostRequest" }>;

let methods: Methods | undefined;

function methodsOf(root: string): Methods {
  methods ??= (JSON.parse(readFileSync(resolve(root, "msp.schema.json"), "utf8")) as { "x-msp-methods": Methods })["x-msp-methods"];
  return methods;
}

function parseObject(raw: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A transcript line (`{"dir", "raw"}`) as the wire line it records, numbered `line`. */
function transcriptEntry(text: string, line: number): WireLine | undefined {
  const entry = parseObject(text);
  if (entry === undefined || (entry["dir"] !== "client" && entry["dir"] !== "server") || typeof entry["raw"] !== "string") return undefined;
  return { line, dir: entry["dir"], raw: entry["raw"], message: parseObject(entry["raw"]) };
}

/** The schema problems of a jsonl block, each at its doc line. */
function jsonlProblems(name: string, lines: readonly string[], block: DocBlock, root: string): string[] {
  const transcript = block.attrs.get("transcript");
  const first = Number(/^(\d+)/.exec(block.attrs.get("lines") ?? "1")?.[1] ?? 1);
  // The transcript's lines before the quote: the requests its responses answer.
  let before: WireLine[] = [];
  if (transcript !== undefined && first > 1) {
    try {
      const all = readFileSync(resolve(root, transcript), "utf8").split("\n");
      before = all.slice(0, first - 1).flatMap((text, i) => transcriptEntry(text, i + 1) ?? []);
    } catch {
      before = []; // a missing transcript is docs-check's own problem
    }
  }
  const quoted = lines.slice(block.start, block.end).flatMap((text, i) => transcriptEntry(text, first + i) ?? []);
  const problems: string[] = [];
  for (const problem of schemaProblems([...before, ...quoted])) {
    const at = Number(/^line (\d+):/.exec(problem)?.[1]);
    if (at < first) continue;
    problems.push(`${name}:${block.start + 1 + (at - first)}: ${problem.replace(/^line \d+: /, "")}`);
  }
  return problems;
}

/** The schema problems of a json block that shows a message, or the params or result of one. */
function jsonProblems(name: string, lines: readonly string[], block: DocBlock, root: string): string[] {
  const text = lines.slice(block.start, block.end).join("\n");
  const value = parseObject(text);
  const at = `${name}:${block.line}`;
  const params = block.attrs.get("params");
  const result = block.attrs.get("result");
  const method = params ?? result;
  if (method !== undefined) {
    if (value === undefined) return [`${at}: a ${params !== undefined ? "params" : "result"}=${method} block must hold one JSON object`];
    const entry = methodsOf(root)[method];
    if (entry === undefined) return [`${at}: ${method} is not a method of msp.schema.json (x-msp-methods)`];
    const sender = entry.kind === "command" ? "client" : "server";
    const answerer = sender === "client" ? "server" : "client";
    const request: Record<string, unknown> = { jsonrpc: "2.0", method, params: params !== undefined ? value : {} };
    if (entry.kind !== "notification") request["id"] = 1;
    const wire: WireLine[] = [{ line: 1, dir: sender, raw: JSON.stringify(request), message: request }];
    if (result !== undefined) {
      if (entry.kind === "notification") return [`${at}: ${method} is a notification: it has no result`];
      const response = { jsonrpc: "2.0", id: 1, result: value };
      wire.push({ line: 2, dir: answerer, raw: JSON.stringify(response), message: response });
    }
    return schemaProblems(wire)
      .filter((problem) => problem.startsWith(params !== undefined ? "line 1:" : "line 2:"))
      .map((problem) => `${at}: ${problem.replace(/^line \d+: /, "")}`);
  }
  if (value === undefined || !("jsonrpc" in value)) return [];
  const dir = typeof value["method"] === "string" && methodsOf(root)[value["method"]]?.kind === "command" ? "client" : "server";
  return schemaProblems([{ line: 1, dir, raw: text, message: value }]).map((problem) => `${at}: ${problem.replace(/^line \d+: /, "")}`);
}

/**
 * The schema problems of a guide's wire examples (see the module comment for which blocks are
 * examples), each `file:line: what`.
 *
 * @example
 * ```ts
 * problems.push(...wireExampleProblems("docs/protocol.md", lines, fencedBlocks(lines), root));
 * ```
 */
export function wireExampleProblems(name: string, lines: readonly string[], blocks: readonly DocBlock[], root: string): string[] {
  return blocks.flatMap((block) =>
    block.lang === "jsonl" ? jsonlProblems(name, lines, block, root) : block.lang === "json" ? jsonProblems(name, lines, block, root) : [],
  );
}
