/**
 * Bundle probe for target (e): how much of the browser core's gzipped size is vscode-jsonrpc,
 * and which of its symbols the core actually uses at runtime.
 * Usage: tsx bench/bundle-probe.ts
 */
import { buildCoreBundle } from "./coreBundle.js";

const size = async (external: string[]) => {
  const { minBytes, gzipBytes } = await buildCoreBundle(external);
  return { min: minBytes, gz: gzipBytes };
};
const whole = await size([]);
const without = await size(["vscode-jsonrpc"]);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
console.log(`core bundle:                 ${kb(whole.gz)} gz (${kb(whole.min)} min)`);
console.log(`core without vscode-jsonrpc: ${kb(without.gz)} gz (${kb(without.min)} min)`);
console.log(`vscode-jsonrpc share:        ${kb(whole.gz - without.gz)} gz`);
