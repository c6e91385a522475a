#!/usr/bin/env node
/**
 * The `muse-host` bin: runs the muse-host command line, built to dist/serve/main.js. A file of its own, not the build's, so
 * that npm links the bin in a fresh checkout before anything is built.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/serve/main.js", import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(`muse-host: ${fileURLToPath(main)} is not built: run npm run build\n`);
  process.exit(1);
}
await import(main.href);
