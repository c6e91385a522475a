/**
 * Wire transcripts: one `{"dir":"client"|"server","raw":"<JSON-RPC text>"}` per line, the
 * format of the seed page. Parse, serialize and read them here.
 */
import { readFileSync } from "node:fs";

/**
 * One line of a transcript: who sent it and the exact JSON-RPC text.
 *
 * @example
 * ```ts
 * import { appendFileSync } from "node:fs";
 * const entry: TranscriptEntry = { dir: "client", raw: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "host/info", params: {} }) };
 * appendFileSync("run.jsonl", `${formatTranscriptEntry(entry)}\n`);
 * ```
 */
export interface TranscriptEntry {
  dir: "client" | "server";
  raw: string;
}

/**
 * A parsed transcript entry with its 1-based line number and its decoded message.
 *
 * @example
 * ```ts
 * for (const { line, dir, message } of readTranscript("transcripts/cancel-race.jsonl")) {
 *   console.log(line, dir, message["method"] ?? message["id"]);
 * }
 * ```
 */
export interface TranscriptLine extends TranscriptEntry {
  line: number;
  message: Record<string, unknown>;
}

/**
 * Parse transcript text (or its lines). Blank lines are skipped; a bad line throws a
 * `SyntaxError` naming its line number.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * const lines = parseTranscript(readFileSync("transcripts/cancel-race.jsonl", "utf8"));
 * ```
 */
export function parseTranscript(text: string | readonly string[]): TranscriptLine[] {
  return readTranscriptRows(text, (line, problem, detail) => {
    throw new SyntaxError(`transcript line ${line}: ${problem}${detail === undefined ? "" : ` (${detail})`}`);
  });
}

/**
 * Parse transcript rows, reporting each bad row through `report(line, problem, detail?)` and skipping
 * it (the shared core of {@link parseTranscript}, which throws, and `checkTranscript`, which
 * collects).
 */
export function readTranscriptRows(text: string | readonly string[], report: (line: number, problem: string, detail?: string) => void): TranscriptLine[] {
  const rows = typeof text === "string" ? text.split("\n") : text;
  const out: TranscriptLine[] = [];
  rows.forEach((row, index) => {
    const line = index + 1;
    if (row.trim() === "") return;
    let entry: unknown;
    try {
      entry = JSON.parse(row);
    } catch (error) {
      return report(line, "not JSON", (error as Error).message);
    }
    const e = entry as Partial<TranscriptEntry>;
    if (typeof entry !== "object" || entry === null || (e.dir !== "client" && e.dir !== "server") || typeof e.raw !== "string") {
      return report(line, `expected {"dir":"client"|"server","raw":"<JSON-RPC text>"}`);
    }
    let message: unknown;
    try {
      message = JSON.parse(e.raw);
    } catch (error) {
      return report(line, "raw is not JSON", (error as Error).message);
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return report(line, "raw must be a JSON-RPC message object");
    }
    out.push({ dir: e.dir, raw: e.raw, line, message: message as Record<string, unknown> });
  });
  return out;
}

/**
 * Serialize one transcript entry as a line (without the newline).
 *
 * @example
 * ```ts
 * formatTranscriptEntry({ dir: "client", raw: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "host/info", params: {} }) });
 * ```
 */
export function formatTranscriptEntry(entry: TranscriptEntry): string {
  return JSON.stringify({ dir: entry.dir, raw: entry.raw });
}

/**
 * Read and parse a transcript file.
 *
 * @example
 * ```ts
 * const lines = readTranscript("transcripts/cancel-mid-turn.jsonl");
 * ```
 */
export function readTranscript(path: string): TranscriptLine[] {
  return parseTranscript(readFileSync(path, "utf8"));
}
