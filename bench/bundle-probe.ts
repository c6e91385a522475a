/**
 * Bundle probe for target (e): how much of the browser core's gzipped size is vscode-jsonrpc,
 * and which of its symbols the core actually uses at runtime.
 * Usage: tsx bench/bundle-probe.ts
 */
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../src/index.ts", import.meta.url));
const size = async (external: string[]) => {
  const r = await build({ entryPoints: [entry], bundle: true, minify: true, platform: "browser", format: "esm", write: false, external, logLevel: "silent" });
  const code = r.outputFiles[0]?.contents ?? new Uint8Array();
  return { min: code.length, gz: gzipSync(code, { level: 9 }).length };
};
const whole = await size([]);
const without = await size(["vscode-jsonrpc"]);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
console.log(`core bundle:                 ${kb(whole.gz)} gz (${kb(whole.min)} min)`);
console.log(`core without vscode-jsonrpc: ${kb(without.gz)} gz (${kb(without.min)} min)`);
console.log(`vscode-jsonrpc share:        ${kb(whole.gz - without.gz)} gz`);
