/**
 * Render bench/results.json (written by `npm run bench`) as an SVG bar chart at
 * docs/benchmarks.svg: notifications/s per variant (the MCP and ACP SDKs included), with the
 * targets drawn as lines, then the round-trip p50 and p99 of the floor, the SDK and its peers,
 * and one line per other row (cancel, heap, bundle, reconnect, a tree's cancel).
 * Rows a partial run (`--only … --out=FILE`) did not measure are left out.
 *
 * Usage: tsx scripts/bench-chart.ts [results.json] [out.svg]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface Percentiles {
  p50: number;
  p99: number;
}

interface Results {
  date: string;
  node: string;
  cpus: number;
  peers?: { mcp: string; acp: string };
  throughput: Record<string, { median: number; runs: number[] }>;
  roundTrip?: { sdk: Percentiles; bare: Percentiles; floor?: Percentiles; mcp?: Percentiles; acp?: Percentiles };
  cancel?: Percentiles;
  recorder?: { heapMB: number };
  bundle?: { gzipBytes: number };
  reconnect?: { session: Percentiles; floor: Percentiles };
  subagentTreeCancel?: { date: string; sizes: Array<{ children: number; tree: { p50: number }; floor: { p50: number } }>; msPerChildBeyondFloor: number };
}

const input = process.argv[2] ?? fileURLToPath(new URL("../bench/results.json", import.meta.url));
const output = process.argv[3] ?? fileURLToPath(new URL("../docs/benchmarks.svg", import.meta.url));
const r = JSON.parse(readFileSync(input, "utf8")) as Results;

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
const W = 760;
const left = 230;
const barMax = W - left - 120;
const rowH = 34;

const mcp = `MCP SDK ${r.peers?.mcp ?? ""}`;
const acp = `ACP SDK ${r.peers?.acp ?? ""}`;
const bars: Array<[string, number, string]> = (
  [
    ["floor (split + JSON.parse)", r.throughput["floor"]?.median, "#9aa5b1"],
    ["bare vscode-jsonrpc (CL)", r.throughput["bare"]?.median, "#d08770"],
    ["SDK NDJSON (full path)", r.throughput["sdk"]?.median, "#5e81ac"],
    ["SDK Content-Length", r.throughput["sdkCL"]?.median, "#81a1c1"],
    [`${mcp}, typed handler`, r.throughput["mcp"]?.median, "#a3be8c"],
    [`${mcp}, fallback handler`, r.throughput["mcpFallback"]?.median, "#c5dbb0"],
    [`${acp}, typed handler`, r.throughput["acp"]?.median, "#b48ead"],
    [`${acp}, "*" handler`, r.throughput["acpFallback"]?.median, "#d3bcd0"],
  ] as Array<[string, number | undefined, string]>
).filter((bar): bar is [string, number, string] => bar[1] !== undefined);
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
target(floorRate * 0.9, "target 0.9× floor", "#2e7d32", 14);
target(bareRate * 1.5, "target 1.5× bare", "#b71c1c", 28);
target(bareRate * 1.2, "CL target 1.2× bare", "#6a1b9a", 42);

// (b) round trips: p50 bars with the p99 written beside them.
let y0 = chartBottom + 70;
const rt = r.roundTrip;
if (rt !== undefined) {
  const rtBars = (
    [
      ["floor (raw pipe + JSON.parse)", rt.floor, "#9aa5b1"],
      ["SDK command()", rt.sdk, "#5e81ac"],
      [`${mcp} ping()`, rt.mcp, "#a3be8c"],
      [`${acp} request()`, rt.acp, "#b48ead"],
      ["bare vscode-jsonrpc sendRequest", rt.bare, "#d08770"],
    ] as Array<[string, Percentiles | undefined, string]>
  ).filter((bar): bar is [string, Percentiles, string] => bar[1] !== undefined);
  const rtMax = Math.max(...rtBars.map((b) => b[1].p50)) * 1.25;
  const rx = (v: number) => left + (v / rtMax) * barMax;
  parts.push(`<text x="20" y="${y0 - 12}" font-size="16" font-weight="600">(b) request round trip, p50 (p99 beside it), µs: lower is better</text>`);
  rtBars.forEach(([label, value, color], i) => {
    const y = y0 + i * rowH;
    parts.push(`<text x="${left - 10}" y="${y + 20}" text-anchor="end">${esc(label)}</text>`);
    parts.push(`<rect x="${left}" y="${y + 6}" width="${Math.max(1, rx(value.p50) - left).toFixed(1)}" height="${rowH - 12}" fill="${color}"/>`);
    parts.push(`<text x="${(rx(value.p50) + 6).toFixed(1)}" y="${y + 20}">${value.p50.toFixed(0)} µs (p99 ${value.p99.toFixed(0)})</text>`);
  });
  const floorP50 = rt.floor?.p50;
  if (floorP50 !== undefined) {
    const tx = rx(floorP50 * 1.3).toFixed(1);
    parts.push(`<line x1="${tx}" x2="${tx}" y1="${y0}" y2="${y0 + rtBars.length * rowH}" stroke="#2e7d32" stroke-dasharray="4 3"/>`);
    parts.push(`<text x="${(Number(tx) + 3).toFixed(1)}" y="${y0 + rtBars.length * rowH + 14}" fill="#2e7d32" font-size="11">target 1.3× floor</text>`);
  }
  y0 += rtBars.length * rowH + 44;
}
const lines = [
  r.cancel && `(c) turn/cancel → turn/completed p50/p99: ${r.cancel.p50.toFixed(1)}/${r.cancel.p99.toFixed(1)} ms (target p99 ≤ 50 ms)`,
  r.recorder && `(d) recorder heap after 1 000 000 terminals: ${r.recorder.heapMB.toFixed(1)} MB (target ≤ 64 MB)`,
  r.bundle && `(e) browser core bundle: ${(r.bundle.gzipBytes / 1024).toFixed(1)} KB min+gz (target ≤ 24 KB)`,
  r.reconnect &&
    `(r) socket drop → first notification shown after the reconnect p50/p99: ${r.reconnect.session.p50.toFixed(1)}/${r.reconnect.session.p99.toFixed(1)} ms (floor ${r.reconnect.floor.p50.toFixed(1)}/${r.reconnect.floor.p99.toFixed(1)} ms)`,
  r.subagentTreeCancel &&
    `(t) cancel a tree, p50 (floor): ${r.subagentTreeCancel.sizes
      .map((s) => `N=${s.children} ${s.tree.p50.toFixed(0)} (${s.floor.p50.toFixed(0)})`)
      .join(
        ", ",
      )} ms: +${r.subagentTreeCancel.msPerChildBeyondFloor.toFixed(1)} ms/child beyond the floor${r.subagentTreeCancel.date.slice(0, 10) === r.date.slice(0, 10) ? "" : ` (${r.subagentTreeCancel.date.slice(0, 10)})`}`,
].filter((line): line is string => typeof line === "string");
lines.forEach((l, i) => parts.push(`<text x="20" y="${y0 + i * 20}">${esc(l)}</text>`));
parts[0] = parts[0]?.replace(/height="\d+"/, `height="${y0 + lines.length * 20 + 10}"`) ?? "";
parts.push(`</svg>`);
writeFileSync(output, `${parts.join("\n")}\n`);
console.error(`wrote ${output}`);
