/** The text `muse check` prints: a header, one table row per scenario, each failure's details, a summary. */
import type { CheckResult } from "./checkResult.js";

const NAME_WIDTH = 30;
/** Longest wire line shown; the rest is cut with an ellipsis. @unit characters */
const MAX_RAW_SHOWN = 240;

const paint = (color: boolean, code: number, text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
const verdict = (result: CheckResult, color: boolean) =>
  result.notSupported !== undefined || result.notRun !== undefined
    ? paint(color, 2, "N/A ")
    : result.passed
      ? paint(color, 32, "PASS")
      : paint(color, 31, "FAIL");

/** The header lines: what runs (`timeoutMs` in milliseconds), and the table's column titles. */
export function formatHeader(count: number, timeoutMs: number, color: boolean): string[] {
  return [
    `muse check: ${count} scenario${count === 1 ? "" : "s"}, each bounded by ${timeoutMs} ms`,
    "",
    paint(color, 2, `${"scenario".padEnd(NAME_WIDTH)}result      time`),
  ];
}

/** One table row: the scenario, PASS or FAIL, its duration. */
export function formatRow(result: CheckResult, color: boolean): string {
  const note = result.timedOut
    ? "  (timed out)"
    : result.notSupported !== undefined
      ? `  (not supported: ${result.notSupported})`
      : result.notRun !== undefined
        ? `  (not run: ${result.notRun})`
        : "";
  return `${result.scenario.padEnd(NAME_WIDTH)}${verdict(result, color)}  ${`${result.durationMs} ms`.padStart(10)}${note}`;
}

/** A failure's details: its problems, then the wire lines they point at. */
export function formatFailure(result: CheckResult, color: boolean): string[] {
  const lines = ["", `${verdict(result, color)} ${result.scenario}`];
  for (const problem of result.problems) lines.push(`  - ${problem}`);
  if (result.lines.length > 0) {
    lines.push("  wire:");
    for (const { line, dir, raw } of result.lines) {
      const text = raw.length > MAX_RAW_SHOWN ? `${raw.slice(0, MAX_RAW_SHOWN)}…` : raw;
      lines.push(paint(color, 2, `  ${String(line).padStart(5)} ${dir === "client" ? "client →" : "host   ←"} ${text}`));
    }
  }
  return lines;
}

/** The notes of every scenario that has some (they fail nothing), each under its scenario's name. */
export function formatNotes(results: readonly CheckResult[]): string[] {
  const lines: string[] = [];
  for (const result of results) {
    if (result.notes === undefined || result.notes.length === 0) continue;
    lines.push("", `note ${result.scenario}`);
    for (const note of result.notes) lines.push(`  - ${note}`);
  }
  return lines;
}

/** The closing lines: how many passed and failed, and which failed. */
export function formatSummary(results: readonly CheckResult[], color: boolean): string[] {
  const notRun = results.filter((r) => r.notRun !== undefined);
  const failed = results.filter((r) => !r.passed && r.notRun === undefined);
  const skipped = results.filter((r) => r.notSupported !== undefined);
  const notRunNote = notRun.length === 0 ? "" : `; ${notRun.length} not run: ${notRun.map((r) => r.scenario).join(", ")}`;
  if (failed.length === 0 && (skipped.length > 0 || notRun.length > 0)) {
    const ran = results.length - skipped.length - notRun.length;
    const unsupported = skipped.length === 0 ? "" : `; ${skipped.length} not supported by this host: ${skipped.map((r) => r.scenario).join(", ")}`;
    return [
      "",
      paint(
        color,
        32,
        ran === 0
          ? `muse check: no scenario run failed${unsupported}${notRunNote}`
          : `muse check: ${ran === 1 ? "the 1 scenario run" : `all ${ran} scenarios run`} passed${unsupported}${notRunNote}`,
      ),
    ];
  }
  if (failed.length === 0)
    return ["", paint(color, 32, results.length === 1 ? "muse check: the 1 scenario passed" : `muse check: all ${results.length} scenarios passed`)];
  return ["", paint(color, 31, `muse check: ${failed.length} of ${results.length} scenarios failed: ${failed.map((r) => r.scenario).join(", ")}${notRunNote}`)];
}
