#!/usr/bin/env node
/** The `muse` bin entry: runs the command line (or, for `muse serve`, the host's) and exits with its code. */
import { processInterrupts } from "./interrupts.js";
import { runMuse } from "./muse.js";
import { isServeCommand, serveCommand } from "./serveCommand.js";

const argv = process.argv.slice(2);

if (isServeCommand(argv)) {
  // The host's own entry (`muse-host`) ends the same way: its code, or one fatal line and 1.
  serveCommand(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`muse-host: fatal: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  // A broken stdout (its reader went away) is handled by runMuse while a command runs; any later
  // write error has nothing left to report to.
  process.stdout.on("error", () => {});

  runMuse(argv, {
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
}
