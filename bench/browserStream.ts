/**
 * (w) The browser stream (issue 34): the reference host (`serve --ws`, session logs on) streams one turn, a
 * 200 000-character message then a shell tool printing 2 MB, over WebSocket into a React 19 page in real Chromium
 * (bench/browser/streamPage.tsx: `openSession`, `useSessionTurn`, React's production build), and the DevTools
 * protocol says what it cost the page: `Performance.getMetrics` (task time, heap) and a trace (`Tracing`) of the
 * renderer's main thread (its tasks, frames and paints) and the page's one clock mark.
 *
 *   npx tsx bench/browserStream.ts            # prints the figures
 *   npm run bench -- --only=browser           # the same as rows of the bench's table
 *
 * Chromium is provisioned as the browser tests do it (test/browser/provisionChromium.ts: @sparticuz/chromium's
 * build inflated once into node_modules/.cache, or the system's), never downloaded at install.
 */
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium, type CDPSession } from "playwright-core";
import { chromiumLaunchOptions, provisionChromium } from "../test/browser/provisionChromium.js";
import { startWsHost } from "../test/helpers/wsHost.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const sdk = (path: string) => join(root, "src", path);

/** The answer's length, its chunk, the pause between chunks, and the tool's output. */
export const STREAM = { messageChars: 200_000, chunkChars: 24, chunkDelayMs: 1, toolLines: 2_000, toolLineBytes: 1_000 } as const;

/** What the page and the trace measured. @unit milliseconds, bytes, counts */
export interface BrowserFigures {
  deltas: number;
  messageChars: number;
  outputChars: number;
  terminal: string | undefined;
  streamMs: number;
  /** Main-thread busy time (the renderer's tasks) from the first delta to the last frame presented, per delta. @unit milliseconds */
  mainThreadMsPerDelta: number;
  /** `Performance.getMetrics` TaskDuration over the page's life, per delta (a cross-check). @unit milliseconds */
  taskDurationMsPerDelta: number;
  longestTaskMs: number;
  tasksOver50Ms: number;
  frames: number;
  framesOver50Ms: number;
  longestFrameMs: number;
  lastDeltaToLastPaintMs: number;
  heapUsedMB: number;
  heapUsedAfterGcMB: number;
}

/** A message of `chars` characters: paragraphs of prose, as a model writes them. */
function answer(chars: number): string {
  const sentence = "The session folds each delta into the item it holds, and the page paints the segment that grew. ";
  let text = "";
  for (let p = 0; text.length < chars; p++) text += `${sentence.repeat(1 + (p % 5))}\n\n`;
  return text.slice(0, chars);
}

function model(dir: string): string {
  const line = "x".repeat(STREAM.toolLineBytes - 12);
  // printf is a builtin: 2 000 lines of ~1 000 bytes, a pause every 50 lines, so the output streams for about 2 s.
  const command = `i=0; while [ "$i" -lt ${STREAM.toolLines} ]; do i=$((i+1)); printf '%06d %s\\n' "$i" "${line}"; [ $((i % 50)) -eq 0 ] && sleep 0.05; done; true`;
  const script = {
    description: "The browser bench: a 200 000-character answer streamed in small chunks, then a tool that prints 2 MB.",
    turns: [
      {
        steps: [
          {
            text: answer(STREAM.messageChars),
            chunkSize: STREAM.chunkChars,
            chunkDelayMs: STREAM.chunkDelayMs,
            toolCalls: [{ tool: "shell", args: { command } }],
          },
          { text: "Done." },
        ],
      },
    ],
  };
  const path = join(dir, "stream-model.json");
  writeFileSync(path, JSON.stringify(script));
  return path;
}

async function buildPage(dir: string): Promise<void> {
  await build({
    entryPoints: [here("./browser/streamPage.tsx")],
    outfile: join(dir, "ui", "app.js"),
    bundle: true,
    // Minified as an app ships, unless a profile asks for names.
    minify: process.env["BENCH_BROWSER_PROFILE"] === undefined,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    alias: {
      "@muse-code/sdk/session": sdk("session/index.ts"),
      "@muse-code/sdk/react": sdk("react/index.ts"),
      "@muse-code/sdk/websocket": sdk("websocket/index.ts"),
      "@muse-code/sdk": sdk("index.ts"),
    },
    logLevel: "silent",
  });
  copyFileSync(here("./browser/index.html"), join(dir, "ui", "index.html"));
}

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: Record<string, unknown>;
}

async function trace(cdp: CDPSession): Promise<() => Promise<TraceEvent[]>> {
  const events: TraceEvent[] = [];
  cdp.on("Tracing.dataCollected", ({ value }) => events.push(...(value as unknown as TraceEvent[])));
  await cdp.send("Tracing.start", {
    transferMode: "ReportEvents",
    traceConfig: {
      includedCategories: [
        "devtools.timeline",
        "disabled-by-default-devtools.timeline",
        "disabled-by-default-devtools.timeline.frame",
        "blink.user_timing",
        "toplevel",
      ],
    },
  });
  return async () => {
    const complete = new Promise<void>((resolve) => cdp.once("Tracing.tracingComplete", () => resolve()));
    await cdp.send("Tracing.end");
    await complete;
    return events;
  };
}

const metric = async (cdp: CDPSession, name: string): Promise<number> => {
  const { metrics } = (await cdp.send("Performance.getMetrics")) as { metrics: Array<{ name: string; value: number }> };
  return metrics.find((m) => m.name === name)?.value ?? NaN;
};

/** Runs the stream once and measures it; `rows` are the bench table's. */
export async function browserStream(
  options: { log?: (line: string) => void } = {},
): Promise<{ figures: BrowserFigures; rows: Array<[string, string, string, string]> }> {
  const log = options.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), "muse-browser-stream-"));
  const provisioned = await provisionChromium(log);
  await buildPage(dir);
  const host = await startWsHost(model(dir), { args: ["--ui-dir", join(dir, "ui"), "--output-cap-bytes", String(4 * 1024 * 1024)] });
  const browser = await chromium.launch(chromiumLaunchOptions(provisioned));
  try {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") problems.push(`console.${message.type()}: ${message.text()}`);
    });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable", { timeDomain: "timeTicks" });
    const endTrace = await trace(cdp);
    // BENCH_BROWSER_PROFILE=<file>: the page's JavaScript CPU profile too (a .cpuprofile for DevTools).
    const profileTo = process.env["BENCH_BROWSER_PROFILE"];
    if (profileTo !== undefined) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
      await cdp.send("Profiler.start");
    }
    await page.goto(`http://127.0.0.1:${host.port}/#token=${encodeURIComponent(host.token)}`);
    await page.waitForFunction(() => (window as unknown as { bench: { endedAt: number } }).bench?.endedAt > 0, undefined, { timeout: 180_000, polling: 500 });
    await page.waitForTimeout(1_000); // whatever the end still paints
    const state = await page.evaluate(() => (window as unknown as { bench: Record<string, number | string | undefined> }).bench);
    if (profileTo !== undefined) writeFileSync(profileTo, JSON.stringify(((await cdp.send("Profiler.stop")) as { profile: unknown }).profile));
    const taskDuration = await metric(cdp, "TaskDuration");
    const heapUsed = await metric(cdp, "JSHeapUsedSize");
    await cdp.send("HeapProfiler.collectGarbage");
    const heapAfterGc = await metric(cdp, "JSHeapUsedSize");
    const events = await endTrace();
    // BENCH_BROWSER_TRACE=<file>: the trace itself (Chrome's JSON trace format: open it in DevTools' Performance panel).
    const traceTo = process.env["BENCH_BROWSER_TRACE"];
    if (traceTo !== undefined) writeFileSync(traceTo, JSON.stringify({ traceEvents: events }));
    if (problems.length > 0) throw new Error(`the page reported: ${problems.join("; ")}`);
    const figures = analyse(events, state, taskDuration, heapUsed, heapAfterGc);
    log(`  (w) ${figures.deltas} deltas in ${figures.streamMs.toFixed(0)} ms, main thread ${figures.mainThreadMsPerDelta.toFixed(3)} ms a delta`);
    return { figures, rows: rows(figures) };
  } finally {
    await browser.close();
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function analyse(
  events: TraceEvent[],
  state: Record<string, number | string | undefined>,
  taskDurationS: number,
  heapUsed: number,
  heapAfterGc: number,
): BrowserFigures {
  const sync = events.find((e) => e.name === "bench-sync" && e.cat.includes("blink.user_timing"));
  if (sync === undefined) throw new Error("the trace has no bench-sync mark");
  const main = events.find((e) => e.ph === "M" && e.name === "thread_name" && e.pid === sync.pid && e.args?.["name"] === "CrRendererMain");
  const tid = main?.tid ?? sync.tid;
  // The page's performance.now() on the trace's clock (microseconds).
  const toTrace = (ms: number) => sync.ts + (ms - (state["syncAt"] as number)) * 1000;
  const firstDelta = toTrace(state["firstDeltaAt"] as number);
  const lastDelta = toTrace(state["lastDeltaAt"] as number);
  const onMain = events.filter((e) => e.pid === sync.pid && e.tid === tid);

  // The last frame presented on screen (the compositor's presentation), else the main thread's last paint.
  const presented = events.filter((e) => e.pid === sync.pid && e.name === "SubmitCompositorFrameToPresentationCompositorFrame" && e.ph === "e");
  const paints = presented.length > 0 ? presented : onMain.filter((e) => e.name === "Paint");
  const lastPaint = Math.max(...paints.map((e) => e.ts + (e.dur ?? 0)));
  // The main thread's tasks from the first delta to the last frame presented (not the bench's own GC after it).
  const tasks = onMain.filter((e) => e.name === "RunTask" && e.ph === "X" && e.ts >= firstDelta && e.ts <= lastPaint);
  const busy = tasks.reduce((sum, e) => sum + (e.dur ?? 0), 0);
  // Chrome's animation frames (its long-animation-frame timing): each frame's duration from the first task that
  // needed it to its rendering, as the browser measured it.
  const frames = events
    .filter((e) => e.pid === sync.pid && e.name === "AnimationFrame" && e.ph === "b" && e.ts >= firstDelta && e.ts <= lastPaint)
    .map((e) => (e.args?.["animation_frame_timing_info"] as { duration_ms?: number } | undefined)?.duration_ms ?? 0);
  const deltas = state["deltas"] as number;
  return {
    deltas,
    messageChars: state["textLength"] as number,
    outputChars: state["outputLength"] as number,
    terminal: state["terminal"] as string | undefined,
    streamMs: (lastDelta - firstDelta) / 1000,
    mainThreadMsPerDelta: busy / 1000 / deltas,
    taskDurationMsPerDelta: (taskDurationS * 1000) / deltas,
    longestTaskMs: Math.max(...tasks.map((e) => (e.dur ?? 0) / 1000)),
    tasksOver50Ms: tasks.filter((e) => (e.dur ?? 0) > 50_000).length,
    frames: frames.length,
    framesOver50Ms: frames.filter((ms) => ms > 50).length,
    longestFrameMs: Math.max(0, ...frames),
    lastDeltaToLastPaintMs: (lastPaint - lastDelta) / 1000,
    heapUsedMB: heapUsed / 2 ** 20,
    heapUsedAfterGcMB: heapAfterGc / 2 ** 20,
  };
}

function rows(f: BrowserFigures): Array<[string, string, string, string]> {
  const ok = (pass: boolean) => (pass ? "met" : "MISSED");
  const what = `${f.messageChars.toLocaleString("en")} chars + ${(f.outputChars / 1e6).toFixed(1)} MB of tool output, ${f.deltas} deltas in ${(f.streamMs / 1000).toFixed(1)} s`;
  return [
    [
      `(w) browser: reference host -> WebSocket -> openSession -> useSessionTurn -> React 19, Chromium; ${what}`,
      "-",
      `main thread ${f.mainThreadMsPerDelta.toFixed(3)} ms a delta (TaskDuration ${f.taskDurationMsPerDelta.toFixed(3)})`,
      "",
    ],
    ["(w) longest task on the page's main thread once streaming started", "-", `${f.longestTaskMs.toFixed(1)} ms (${f.tasksOver50Ms} tasks over 50 ms)`, ""],
    [
      "(w) frames over 50 ms once streaming started",
      "0",
      `${f.framesOver50Ms} of ${f.frames} (longest ${f.longestFrameMs.toFixed(1)} ms)`,
      ok(f.framesOver50Ms === 0),
    ],
    ["(w) last delta -> last paint", "<= 1 frame (16.7 ms)", `${f.lastDeltaToLastPaintMs.toFixed(1)} ms`, ok(f.lastDeltaToLastPaintMs <= 1000 / 60)],
    ["(w) JS heap at the end (after a GC)", "-", `${f.heapUsedMB.toFixed(1)} MB (${f.heapUsedAfterGcMB.toFixed(1)} MB)`, ""],
  ];
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { figures, rows: table } = await browserStream({ log: (line) => process.stderr.write(`${line}\n`) });
  console.log(JSON.stringify(figures, null, 2));
  for (const row of table) console.log(`| ${row.join(" | ")} |`);
  process.exit(0);
}
