/**
 * The Stop-button app (demo/) in headless Chromium against the real reference host over real
 * sockets: `muse-host serve --ws --ui-dir` serving the app built from the sources, with
 * models/demo.json (a shell tool that builds for ~15 s and drains ~1.2 s after SIGTERM).
 * - Stop while the tool drains: "Stopping…" (disabled, aria-busy) from the click until the
 *   turn's own terminal, while the drain's output still streams; then the host's terminal and
 *   reason. A double click is one turn/cancel: one frame on the page's socket, one cancel in the
 *   host's session log.
 * - Reload mid-turn: the page resumes from the cursor the session layer kept in sessionStorage,
 *   keeps streaming, and (reloaded again while stopping) still shows the terminal the host logged.
 * - Kill the host mid-turn: "reconnecting", the turn reads "reconnecting…" (the host may still be
 *   running it), never failed; "Retry now" shows, Start is disabled, and no page error.
 * - The queue: turns started while one runs wait in it; Remove cancels one, Stop discards the rest,
 *   each with the terminal the host logged. A wrong token: not connected, with the error's message.
 * The drops, host restarts, reloads and Stops across them are in demoSession.test.ts.
 * Chromium is provisioned once per run by test/browser/globalSetup.ts.
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { buildDemoPage, pageWords, startDemoHost, type DemoHost } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

let browser: Browser;
let ui: { dir: string; remove(): void };
const hosts: DemoHost[] = [];

beforeAll(async () => {
  ui = await buildDemoPage();
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
}, 60_000);
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.stop()));
});
afterAll(async () => {
  await browser?.close();
  ui?.remove();
});

/** What Chromium logs when a WebSocket cannot connect (the host is down): the browser's line, not the page's. */
const REFUSED = /^WebSocket connection to '\S+' failed: /;

/** A page on a fresh host, with what it sent on its WebSockets and every page error and console error. */
async function openDemo(): Promise<{ host: DemoHost; page: Page; sent: Record<string, unknown>[]; problems: string[] }> {
  const host = await startDemoHost(ui.dir);
  hosts.push(host);
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const sent: Record<string, unknown>[] = [];
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    // Chromium itself logs each refused connection attempt while the page reconnects: not the page's error.
    if (message.type() === "error" && !REFUSED.test(message.text())) problems.push(`console.error: ${message.text()}`);
  });
  page.on("websocket", (socket) => socket.on("framesent", ({ payload }) => sent.push(JSON.parse(String(payload)) as Record<string, unknown>)));
  await page.goto(host.pageUrl);
  await page.waitForSelector("#start:not([disabled])");
  return { host, page, sent, problems };
}

/** What the Stop button and the status line showed at each DOM change, recorded in the page. */
async function recordTimeline(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { timeline: { stop: string; busy: string | null; disabled: boolean; drainLines: number; status: string }[] };
    w.timeline = [];
    const record = () => {
      const stop = document.querySelector<HTMLButtonElement>("#stop") as HTMLButtonElement;
      const output = document.querySelector(".turn:last-child .tool-output")?.textContent ?? "";
      w.timeline.push({
        stop: stop.textContent ?? "",
        busy: stop.getAttribute("aria-busy"),
        disabled: stop.disabled,
        drainLines: output.split("\n").filter((line) => line.startsWith("cleanup step")).length,
        status: document.querySelector("#status")?.textContent ?? "",
      });
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

function timeline(page: Page) {
  return page.evaluate(
    () => (window as unknown as { timeline: { stop: string; busy: string | null; disabled: boolean; drainLines: number; status: string }[] }).timeline,
  );
}

const toolOutput = (page: Page) => page.textContent(".turn:last-child .tool-output");
const waitForOutput = (page: Page, text: string, timeout = 10_000) =>
  page.waitForFunction((t) => (document.querySelector(".turn:last-child .tool-output")?.textContent ?? "").includes(t), text, { timeout });
const cancels = (sent: Record<string, unknown>[]) => sent.filter((message) => message["method"] === "turn/cancel");

/** The host's logged terminals, by turnId, as the page words them. */
function loggedTerminals(host: DemoHost): Map<string, string> {
  const completed = host.sessionLog().filter((record) => record["type"] === "turnCompleted");
  return new Map(completed.map((record) => [String(record["turnId"]), pageWords(record)]));
}

/** The host's logged terminal of the session's one turn, as the page words it. */
function loggedTerminal(host: DemoHost): string {
  const terminals = [...loggedTerminals(host).values()];
  expect(terminals).toHaveLength(1);
  return terminals[0] as string;
}

describe("the Stop-button app in Chromium, against the real host", () => {
  it("Stop while the tool drains: Stopping… until the turn's own terminal, then cancelled with the host's reason; a double click is one turn/cancel", async () => {
    const { host, page, sent, problems } = await openDemo();
    expect(page.url()).not.toContain("token"); // taken from the fragment, then removed from the address bar
    await page.fill("#prompt", "Build the project");
    await page.click("#start");
    await waitForOutput(page, "[2/60]");
    const before = (await toolOutput(page)) ?? "";
    await waitForOutput(page, "[4/60]");
    expect(((await toolOutput(page)) ?? "").length).toBeGreaterThan(before.length); // it streams
    expect(await page.textContent(".turn:last-child .message")).toContain("Building the project.");

    await recordTimeline(page);
    await page.dblclick("#stop");
    expect(await page.textContent("#stop")).toBe("Stopping…");
    expect(await page.getAttribute("#stop", "aria-busy")).toBe("true");
    expect(await page.isDisabled("#stop")).toBe(true);
    await page.waitForFunction(() => (document.querySelector(".turn:last-child .outcome") as HTMLElement | null)?.dataset["tone"] === "cancelled", undefined, {
      timeout: 10_000,
    });

    const terminal = loggedTerminal(host);
    expect(terminal).toBe("you stopped it (cancelled during tool execution)");
    expect(await page.textContent(".turn:last-child .outcome")).toBe(terminal);
    expect(await page.textContent("#status")).toBe(terminal);
    expect(await page.getAttribute("#stop", "aria-busy")).toBe("false");
    expect(await page.getAttribute("#stop", "data-state")).toBe("ended");
    // The drain streamed while the button said Stopping…, and it said so until the terminal came.
    const frames = await timeline(page);
    const first = frames.findIndex((f) => f.stop === "Stopping…");
    const last = frames.findIndex((f) => f.status === terminal);
    expect(first).toBeGreaterThanOrEqual(0);
    expect(last).toBeGreaterThan(first);
    for (const f of frames.slice(first, last)) expect(f).toMatchObject({ stop: "Stopping…", busy: "true", disabled: true });
    expect(Math.max(...frames.slice(first, last).map((f) => f.drainLines))).toBeGreaterThanOrEqual(2);
    expect(await toolOutput(page)).toMatch(/cleanup step 3 of 3 done\nbuild stopped after \d+ of 60 modules/);

    // One press, one turn/cancel: on the page's socket, and in the host's session log.
    expect(cancels(sent)).toHaveLength(1);
    expect(host.sessionLog().filter((record) => record["type"] === "cancelRequested")).toHaveLength(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("reload mid-turn: the page resumes from the cursor it kept, streams on, and shows the terminal the host logged", async () => {
    const { host, page, sent, problems } = await openDemo();
    await page.click("#start");
    await waitForOutput(page, "[3/60]");
    const cursor = await page.evaluate(() => (JSON.parse(sessionStorage.getItem("muse-demo:session") ?? "{}") as { cursor?: string }).cursor);
    expect(cursor).toMatch(/^v:.+:\d+$/);

    await page.reload();
    await page.waitForSelector("#start:not([disabled])");
    expect(await page.textContent("#status")).toMatch(/^Resumed the session/);
    const resume = sent.find((message) => message["method"] === "session/resume");
    expect((resume?.["params"] as Record<string, unknown>)["afterCursor"]).toBeDefined();
    // The turn is still there (from memory) and streams on (from the host).
    expect(await page.textContent(".turn:last-child .tool-output")).toContain("[3/60]");
    await waitForOutput(page, "[7/60]");
    expect(await page.getAttribute("#stop", "data-state")).toBe("running");

    await page.click("#stop");
    await waitForOutput(page, "SIGTERM");
    await page.reload(); // again, while the tool drains
    await page.waitForSelector("#start:not([disabled])");
    await page.waitForFunction(() => (document.querySelector(".turn:last-child .outcome") as HTMLElement | null)?.dataset["tone"] === "cancelled", undefined, {
      timeout: 10_000,
    });
    const terminal = loggedTerminal(host);
    expect(await page.textContent(".turn:last-child .outcome")).toBe(terminal);
    expect(await page.textContent("#status")).toBe(terminal);
    expect(await page.locator(".turn").count()).toBe(1);
    expect(host.sessionLog().filter((record) => record["type"] === "cancelRequested")).toHaveLength(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("kill the host mid-turn: reconnecting, the turn reads reconnecting… and never failed, Retry now shows, no page error", async () => {
    const { host, page, problems } = await openDemo();
    await page.click("#start");
    await waitForOutput(page, "[2/60]");
    await host.crash();
    await page.waitForSelector('#connection[data-connection="reconnecting"]', { timeout: 5_000 });
    expect(await page.textContent("#connection-text")).toMatch(/^reconnecting… \(/);
    await page.waitForSelector('.turn:last-child[data-phase="reconnecting"]', { timeout: 5_000 });
    expect(await page.textContent(".turn:last-child .outcome")).toBe("reconnecting…");
    await page.waitForTimeout(1_500); // a few failed attempts later, still only reconnecting
    expect(await page.textContent(".turn:last-child .outcome")).toBe("reconnecting…");
    expect(await page.getAttribute("#stop", "data-state")).toBe("reconnecting");
    expect(await page.isDisabled("#stop")).toBe(false); // a Stop pressed now is kept and sent after the reconnect
    expect(await page.isDisabled("#start")).toBe(true);
    expect(await page.isVisible("#reconnect")).toBe(true);
    expect(await page.textContent("#reconnect")).toBe("Retry now");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("the queue: a turn started while one runs waits; Remove cancels it alone, Stop discards the rest, each with the host's terminal", async () => {
    const { host, page, problems } = await openDemo();
    await page.fill("#prompt", "first");
    await page.click("#start");
    await waitForOutput(page, "[1/60]");
    await page.fill("#prompt", "second");
    await page.click("#start");
    await page.fill("#prompt", "third");
    await page.press("#prompt", "Control+Enter"); // the keyboard's Start
    await page.waitForFunction(() => document.querySelectorAll("#queue li").length === 2);
    expect(await page.locator("#queue li span").allTextContents()).toEqual(["second", "third"]);
    expect(await page.textContent("#queue-count")).toBe("2");
    expect(await page.isVisible("#queue-empty")).toBe(false);
    expect(await page.getAttribute("#stop", "data-state")).toBe("running"); // Stop is the running turn's

    await page.click('#queue li:first-child button:has-text("Remove")');
    await page.waitForFunction(() => document.querySelectorAll("#queue li").length === 1);
    await page.click("#stop");
    await page.waitForFunction(() => document.querySelectorAll('.turn[data-phase="ended"]').length === 3, undefined, { timeout: 10_000 });
    expect(await page.isVisible("#queue-empty")).toBe(true);
    const logged = loggedTerminals(host);
    const shown = await page.$$eval(".turn", (turns) => turns.map((t) => [(t as HTMLElement).dataset["turnId"], t.querySelector(".outcome")?.textContent]));
    expect(shown.map(([, outcome]) => outcome)).toEqual([
      "you stopped it (cancelled during tool execution)",
      "you stopped it (cancelled before start)",
      "you stopped it (discarded from inbox)",
    ]);
    for (const [turnId, outcome] of shown) expect(logged.get(turnId as string)).toBe(outcome);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a wrong token: not connected, and the error's message", async () => {
    const host = await startDemoHost(ui.dir);
    hosts.push(host);
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`http://127.0.0.1:${host.port}/#token=not-the-token`);
    // A browser does not show a refused upgrade's HTTP 401: the socket just closes, and the session retries.
    await page.waitForSelector('#connection[data-connection="reconnecting"]', { timeout: 10_000 });
    expect(await page.textContent("#status")).toMatch(/^Reconnecting: connectWebSocket: \S/);
    expect(await page.textContent("#connection-text")).toMatch(/^reconnecting… \(attempt \d+ in [\d.]+ s; connectWebSocket: \S/);
    expect(await page.isDisabled("#start")).toBe(true);
    expect(await page.isVisible("#reconnect")).toBe(true);
    expect(host.stderr()).not.toContain("not-the-token");
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
