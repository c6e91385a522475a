#!/usr/bin/env node
/**
 * The `muse` bin: runs the muse CLI, built to dist/cli/main.js. A file of its own, not the build's, so
 * that npm links the bin in a fresh checkout before anything is built.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(`muse: ${fileURLToPath(main)} is not built: run npm run build\n`);
  process.exit(1);
}
await import(main.href);
