/**
 * Env-gated timing marks of the host's hot paths (the cancel path first): with
 * `MUSE_HOST_TRACE=<file>` set, {@link traceMark} keeps `<monotonic ns> <label> <key>` lines in
 * memory and appends them to that file at exit (or every 4096 marks). Off (the default) it is one
 * boolean test. The clock is `process.hrtime.bigint()` (CLOCK_MONOTONIC on Linux), the same clock
 * in every process on the machine, so a client's marks line up with the host's.
 */
import { appendFileSync } from "node:fs";

/** The environment variable naming the trace file. */
const TRACE_ENV = "MUSE_HOST_TRACE";

const file = process.env[TRACE_ENV];
const lines: string[] = [];

function flush(): void {
  if (file === undefined || lines.length === 0) return;
  const text = `${lines.join("\n")}\n`;
  lines.length = 0;
  try {
    appendFileSync(file, text);
  } catch {
    // a trace is a diagnostic: never let it take the host down
  }
}

if (file !== undefined) process.on("exit", flush);

/** Whether marks are kept (`MUSE_HOST_TRACE` was set when the host started). */
export const tracing: boolean = file !== undefined;

/**
 * Records the monotonic time now under `label` (and `key`, e.g. a turnId or pid, to tell runs
 * apart). A no-op unless {@link tracing}.
 */
export function traceMark(label: string, key = "-"): void {
  if (file === undefined) return;
  lines.push(`${process.hrtime.bigint()} ${label} ${key}`);
  if (lines.length >= 4096) flush();
}
