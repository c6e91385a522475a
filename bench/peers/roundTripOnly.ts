/**
 * Round trips only, for a CPU profile of `command()` → response:
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/peers/roundTripOnly.ts [rounds]
 * The SDK's `command("host/info", {})` to the echo child of row (b) (bench/peers/children/peerHost.mjs), sequentially, nothing else.
 */
import { fileURLToPath } from "node:url";
import { spawnHost } from "../../src/node/index.js";

const echoHost = fileURLToPath(new URL("./children/peerHost.mjs", import.meta.url));
const rounds = Number(process.argv[2] ?? 20_000);
const host = spawnHost({ command: process.execPath, args: [echoHost, "msp", "0"], stderr: "inherit" });
const times: number[] = [];
for (let i = 0; i < rounds; i++) {
  const t0 = performance.now();
  await host.command("host/info", {});
  times.push((performance.now() - t0) * 1000);
}
await host.close();
times.sort((a, b) => a - b);
const at = (p: number) => (times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)] as number).toFixed(0);
process.stderr.write(`${rounds} round trips: p50 ${at(0.5)} us, p99 ${at(0.99)} us\n`);
