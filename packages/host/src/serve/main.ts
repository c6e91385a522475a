#!/usr/bin/env node
/** The `muse-host` bin entry: runs the command line and exits with its code. */
import { runHostCli } from "./runHostCli.js";

runHostCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`muse-host: fatal: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
