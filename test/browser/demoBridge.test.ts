/**
 * The Stop-button app on the session layer against each bridged host, in headless Chromium over
 * real sockets: `muse-host serve --ws --agent codex` with the real pinned Codex binary behind it,
 * and `muse-host serve --ws --agent acp -- codex-acp` with the real pinned codex-acp binary; the
 * scripted Responses server is each agent's model. A bridged session is a session like any other
 * to the page:
 * - A drop from the network mid-command: the turn reads "reconnecting…", never failed; the page
 *   reconnects by itself, the command's output streams on, and a Stop then ends the turn with the
 *   bridge's own `cancelled` only once the command's process is gone (checked by pid).
 * - A reload mid-command, then a reload while stopping: the page resumes the turn, shows
 *   "Stopping…" from the click across the reload until the real terminal, and sends one cancel.
 */
import { readFileSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { descendantsOf } from "../../recipes/processTree.js";
import { codexAcpBinary } from "../fixtures/acp/acpBridgedHost.js";
import { codexAcpHome } from "../fixtures/acp/codexAcpHome.js";
import { makeCodexHome, type CodexTestHome } from "../fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer, type ResponsesServer } from "../fixtures/codex/responsesServer.js";
import { buildDemoPage, pageWords, startDemoHost, startPageProxy, type DemoHost, type PageProxy } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

/** A command that prints a numbered line every 100 ms for 40 s: it is still running when the test stops it. */
const COMMAND = "for i in $(seq 1 400); do echo bridged line $i; sleep 0.1; done";
/** What Chromium logs when a WebSocket cannot connect (the proxy refuses): the browser's line, not the page's. */
const REFUSED = /^WebSocket connection to '\S+' failed: /;

let browser: Browser;
let ui: { dir: string; remove(): void };
let model: ResponsesServer;
/** Codex's home, and codex-acp's (its config names a model slug Codex knows, ../fixtures/acp/codexAcpHome.ts). */
let home: CodexTestHome;
let acpHome: CodexTestHome;
let acpEnv: NodeJS.ProcessEnv;
const cleanups: Array<() => Promise<unknown> | unknown> = [];

beforeAll(async () => {
  ui = await buildDemoPage();
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
  model = await startResponsesServer(execThenMessage(COMMAND));
  home = makeCodexHome({ baseUrl: model.baseUrl });
  acpHome = makeCodexHome({ baseUrl: model.baseUrl });
  acpEnv = codexAcpHome(acpHome);
}, 60_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await browser?.close();
  await model?.close();
  home?.remove();
  acpHome?.remove();
  ui?.remove();
});

/** What the page showed at one DOM change. */
interface Frame {
  /** Which page load (its `performance.timeOrigin`). */
  load: number;
  phase: string;
  outcome: string;
  stop: string;
}

interface Demo {
  host: DemoHost;
  proxy: PageProxy;
  page: Page;
  frames: Frame[];
  sent: Record<string, unknown>[];
  problems: string[];
}

/** A bridge the page is tried on: how the host runs its turns, where, and with what environment. */
interface Bridge {
  name: string;
  turnsBy(): string[];
  cwd(): string;
  env(): Record<string, string>;
}
const BRIDGES: Bridge[] = [
  {
    name: "muse serve --agent codex",
    turnsBy: () => ["--agent", "codex"],
    cwd: () => home.workDir,
    env: () => ({ ...(home.env as Record<string, string>), CODEX_HOME: home.codexHome }),
  },
  {
    name: "muse serve --agent acp -- codex-acp",
    turnsBy: () => ["--agent", "acp", "--", codexAcpBinary()],
    cwd: () => acpHome.workDir,
    env: () => acpEnv as Record<string, string>,
  },
];

/** A page, through a TCP proxy the test can cut, on a fresh host bridged by `bridge`. */
async function openBridgedDemo(bridge: Bridge): Promise<Demo> {
  const target = { port: 0 };
  const proxy = await startPageProxy(() => target.port);
  cleanups.push(() => proxy.close());
  const host = await startDemoHost(ui.dir, {
    turnsBy: bridge.turnsBy(),
    cwd: bridge.cwd(),
    env: bridge.env(),
    allowOrigins: [`http://127.0.0.1:${proxy.port}`],
  });
  target.port = host.port;
  cleanups.push(() => host.stop());
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  cleanups.push(() => page.close());
  const frames: Frame[] = [];
  const sent: Record<string, unknown>[] = [];
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !REFUSED.test(message.text())) problems.push(`console.error: ${message.text()}`);
  });
  page.on("websocket", (socket) => socket.on("framesent", ({ payload }) => sent.push(JSON.parse(String(payload)) as Record<string, unknown>)));
  await page.exposeFunction("recordFrame", (json: string) => frames.push(JSON.parse(json) as Frame));
  await page.addInitScript(() => {
    addEventListener("DOMContentLoaded", () => {
      let last = "";
      const record = () => {
        const turn = document.querySelector<HTMLElement>(".turn:last-child");
        const frame = JSON.stringify({
          load: performance.timeOrigin,
          phase: turn?.dataset["phase"] ?? "",
          outcome: turn?.querySelector(".outcome")?.textContent ?? "",
          stop: document.querySelector("#stop")?.textContent ?? "",
        });
        if (frame === last) return;
        last = frame;
        void (window as unknown as { recordFrame(json: string): Promise<void> }).recordFrame(frame);
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      record();
    });
  });
  await page.goto(proxy.pageUrl(host));
  await page.waitForSelector("#start:not([disabled])");
  return { host, proxy, page, frames, sent, problems };
}

const waitForOutput = (page: Page, text: string, timeout = 30_000) =>
  page.waitForFunction((t) => (document.querySelector(".turn:last-child .tool-output")?.textContent ?? "").includes(t), text, { timeout });
const waitForPhase = (page: Page, phase: string, timeout = 30_000) => page.waitForSelector(`.turn:last-child[data-phase="${phase}"]`, { timeout });
const outcome = (page: Page) => page.textContent(".turn:last-child .outcome");

/** The host's logged terminals, as the page words them. */
const loggedTerminals = (host: DemoHost) =>
  host
    .sessionLog()
    .filter((record) => record["type"] === "turnCompleted")
    .map(pageWords);
const cancelsLogged = (host: DemoHost) => host.sessionLog().filter((record) => record["type"] === "cancelRequested");

/** The pids below the host (Codex, its shells) whose command line runs the scripted command. */
function commandPids(host: DemoHost): number[] {
  return descendantsOf(host.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("bridged line");
    } catch {
      return false; // gone meanwhile
    }
  });
}
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Clicks Stop, and resolves once the host's terminal is on show; every pid of the command must be gone by then. */
async function stopAndCheckGone(demo: Demo, pids: number[]): Promise<string> {
  await demo.page.click("#stop");
  await waitForPhase(demo.page, "ended");
  const [terminal] = loggedTerminals(demo.host);
  expect(terminal).toMatch(/^you stopped it/);
  expect(await outcome(demo.page)).toBe(terminal);
  expect(pids.filter(alive)).toEqual([]);
  return terminal as string;
}

describe.each(BRIDGES)("the Stop-button app on a bridged host ($name): drops, reloads and an honest Stop, in Chromium", { timeout: 120_000 }, (bridge) => {
  it("a drop mid-command: reconnecting…, never failed; the page reconnects by itself, the output streams on, and Stop ends the turn once the command is gone", async () => {
    const demo = await openBridgedDemo(bridge);
    const { page, host, proxy } = demo;
    await page.fill("#prompt", "Run the long command");
    await page.click("#start");
    await waitForOutput(page, "bridged line 5\n");
    const pids = commandPids(host);
    expect(pids.length).toBeGreaterThan(0);

    proxy.refuse(true);
    proxy.cut();
    await waitForPhase(page, "reconnecting", 5_000);
    expect(await outcome(page)).toBe("reconnecting…");
    proxy.refuse(false); // the page retries by itself
    await page.waitForSelector('#connection[data-connection="connected"]', { timeout: 15_000 });
    const shownBefore = (await page.textContent(".turn:last-child .tool-output")) ?? "";
    const next = Number(/bridged line (\d+)\n$/.exec(shownBefore)?.[1] ?? "0") + 3;
    await waitForOutput(page, `bridged line ${next}\n`); // it streams on after the reconnect
    expect(pids.every(alive)).toBe(true);

    await stopAndCheckGone(demo, pids);
    expect(cancelsLogged(host)).toHaveLength(1);
    // The output on show is the host's, once: the replay merged, not appended twice.
    const lines = ((await page.textContent(".turn:last-child .tool-output")) ?? "").match(/bridged line \d+/g) ?? [];
    expect(new Set(lines).size).toBe(lines.length);
    expect(demo.frames.filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    expect(demo.problems).toEqual([]);
  });

  it("a reload mid-command, then a reload while stopping: the page resumes, shows Stopping… across the reload until the bridge's terminal; one cancel", async () => {
    const demo = await openBridgedDemo(bridge);
    const { page, host } = demo;
    await page.fill("#prompt", "Run the long command");
    await page.click("#start");
    await waitForOutput(page, "bridged line 3\n");
    const pids = commandPids(host);
    expect(pids.length).toBeGreaterThan(0);
    await page.reload();
    await page.waitForSelector("#start:not([disabled])");
    expect(await page.textContent("#status")).toMatch(/^Resumed the session/);
    await waitForPhase(page, "running");
    await waitForOutput(page, "bridged line 8\n");

    const clicked = demo.frames.length;
    await page.click("#stop");
    await expect.poll(() => cancelsLogged(host).length, { timeout: 10_000 }).toBe(1);
    await page.reload(); // while the bridge reaps the command
    await page.waitForSelector("#start:not([disabled])");
    await waitForPhase(page, "ended");
    const [terminal] = loggedTerminals(host);
    expect(terminal).toMatch(/^you stopped it/);
    expect(await outcome(page)).toBe(terminal);
    expect(pids.filter(alive)).toEqual([]);
    const after = demo.frames.slice(clicked);
    const last = after.findIndex((frame) => frame.outcome === terminal);
    const stopping = after.slice(0, last).filter((frame) => frame.phase !== "");
    expect(stopping.length).toBeGreaterThan(0);
    for (const frame of stopping) expect(frame).toMatchObject({ phase: "stopping", outcome: "Stopping…", stop: "Stopping…" });
    expect(cancelsLogged(host)).toHaveLength(1);
    // One Stop: a reload before the page kept the cancel's ack may send it again, with the same
    // commandId (an idempotent retry), and the host heard one cancel (above).
    const cancels = demo.sent.filter((message) => message["method"] === "turn/cancel");
    expect(cancels.length).toBeGreaterThan(0);
    expect(new Set(cancels.map((message) => (message["params"] as { commandId: string }).commandId)).size).toBe(1);
    expect(demo.frames.filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    expect(await page.locator(".turn").count()).toBe(1);
    expect(demo.problems).toEqual([]);
  });
});
