/**
 * Render bench/results.json (written by `npm run bench`) as an SVG bar chart at
 * docs/benchmarks.svg: notifications/s per variant, with the targets drawn as lines.
 *
 * Usage: tsx scripts/bench-chart.ts [results.json] [out.svg]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface Results {
  date: string;
  node: string;
  cpus: number;
  throughput: Record<string, { median: number; runs: number[] }>;
  roundTrip: { sdk: { p50: number; p99: number }; bare: { p50: number; p99: number }; floor?: { p50: number; p99: number } };
  cancel: { p50: number; p99: number };
  recorder: { heapMB: number };
  bundle: { gzipBytes: number };
}

const input = process.argv[2] ?? fileURLToPath(new URL("../bench/results.json", import.meta.url));
const output = process.argv[3] ?? fileURLToPath(new URL("../docs/benchmarks.svg", import.meta.url));
const r = JSON.parse(readFileSync(input, "utf8")) as Results;

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
const W = 760;
const left = 230;
const barMax = W - left - 120;
const rowH = 34;

const bars: Array<[string, number, string]> = [
  ["floor (split + JSON.parse)", r.throughput["floor"]?.median ?? 0, "#9aa5b1"],
  ["bare vscode-jsonrpc (CL)", r.throughput["bare"]?.median ?? 0, "#d08770"],
  ["SDK NDJSON (full path)", r.throughput["sdk"]?.median ?? 0, "#5e81ac"],
  ["SDK Content-Length", r.throughput["sdkCL"]?.median ?? 0, "#81a1c1"],
];
const max = Math.max(...bars.map((b) => b[1])) * 1.1;
const x = (v: number) => left + (v / max) * barMax;
const floorRate = bars[0]?.[1] ?? 0;
const bareRate = bars[1]?.[1] ?? 0;
const top = 60;
const chartBottom = top + bars.length * rowH;

const parts: string[] = [];
parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${chartBottom + 150}" font-family="system-ui, sans-serif" font-size="13">`);
parts.push(`<rect width="100%" height="100%" fill="#fff"/>`);
parts.push(`<text x="20" y="28" font-size="16" font-weight="600">(a) ~800-byte notifications/s from a real child process (median)</text>`);
parts.push(`<text x="20" y="46" fill="#555">${esc(`${r.date.slice(0, 10)} · node ${r.node} · ${r.cpus} CPUs`)}</text>`);
bars.forEach(([label, value, color], i) => {
  const y = top + i * rowH;
  parts.push(`<text x="${left - 10}" y="${y + 20}" text-anchor="end">${esc(label)}</text>`);
  parts.push(`<rect x="${left}" y="${y + 6}" width="${Math.max(1, x(value) - left).toFixed(1)}" height="${rowH - 12}" fill="${color}"/>`);
  parts.push(`<text x="${(x(value) + 6).toFixed(1)}" y="${y + 20}">${Math.round(value / 1000)}k/s</text>`);
});
const target = (value: number, label: string, color: string, dy: number) => {
  parts.push(`<line x1="${x(value).toFixed(1)}" x2="${x(value).toFixed(1)}" y1="${top}" y2="${chartBottom}" stroke="${color}" stroke-dasharray="4 3"/>`);
  parts.push(`<text x="${(x(value) + 3).toFixed(1)}" y="${chartBottom + dy}" fill="${color}" font-size="11">${esc(label)}</text>`);
};
target(floorRate * 0.5, "target 0.5× floor", "#2e7d32", 14);
target(bareRate * 1.5, "target 1.5× bare", "#b71c1c", 28);
target(bareRate * 1.2, "CL target 1.2× bare", "#6a1b9a", 42);

const y0 = chartBottom + 70;
const lines = [
  `(b) round trip p50/p99: SDK ${r.roundTrip.sdk.p50.toFixed(0)}/${r.roundTrip.sdk.p99.toFixed(0)} µs · bare vscode-jsonrpc ${r.roundTrip.bare.p50.toFixed(0)}/${r.roundTrip.bare.p99.toFixed(0)} µs${r.roundTrip.floor === undefined ? "" : ` · raw pipe floor ${r.roundTrip.floor.p50.toFixed(0)}/${r.roundTrip.floor.p99.toFixed(0)} µs`} (target p50 ≤ 100 µs)`,
  `(c) turn/cancel → turn/completed p50/p99: ${r.cancel.p50.toFixed(1)}/${r.cancel.p99.toFixed(1)} ms (target p99 ≤ 50 ms)`,
  `(d) recorder heap after 1 000 000 terminals: ${r.recorder.heapMB.toFixed(1)} MB (target ≤ 64 MB)`,
  `(e) browser core bundle: ${(r.bundle.gzipBytes / 1024).toFixed(1)} KB min+gz (target ≤ 24 KB)`,
];
lines.forEach((l, i) => parts.push(`<text x="20" y="${y0 + i * 20}">${esc(l)}</text>`));
parts.push(`</svg>`);
writeFileSync(output, `${parts.join("\n")}\n`);
console.error(`wrote ${output}`);
