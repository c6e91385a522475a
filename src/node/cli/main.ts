#!/usr/bin/env node
/** The `muse` bin entry: runs the command line and exits with its code. */
import { processInterrupts } from "./interrupts.js";
import { runMuse } from "./muse.js";

// A broken stdout (its reader went away) is handled by runMuse while a command runs; any later
// write error has nothing left to report to.
process.stdout.on("error", () => {});

runMuse(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  interrupts: processInterrupts(),
}).then(
  (code) => {
    // Exit once stdout is flushed (a pipe may still hold the last lines).
    process.stdout.write("", () => process.exit(code));
  },
  (error: unknown) => {
    process.stderr.write(`muse: fatal: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
