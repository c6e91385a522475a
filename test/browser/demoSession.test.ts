/**
 * The Stop-button app on the session layer (`openSession` from `@muse-code/sdk/session`), in
 * headless Chromium against the real reference host over real sockets. Only the host ends a turn:
 * whatever happens to the connection, the page never shows `failed` for a turn the host did not
 * end. Each test records, from the page's DOM at every change (across reloads too), the last
 * turn's phase and outcome, the Stop button and the dialog, and checks the host's session log.
 * - A drop from the network (a TCP proxy in front of the host cuts the page's socket and refuses
 *   for a while): the turn reads "reconnecting…", never failed; the page reconnects by itself and
 *   shows the turn's real terminal, with its output whole.
 * - The host SIGKILLed and restarted on the same `--data`, port and `--token-file`: the turn ends
 *   with the host's own "failed: host restarted" (the page: "the host restarted"), and nothing before it read failed or unknown.
 * - A reload mid-turn, and a reload while stopping: the page resumes the turn, and shows
 *   "Stopping…" from the click, across the reload, until the real terminal; one cancel.
 * - Stop pressed while disconnected (a double click): "Stopping…" at once, nothing reaches the
 *   host; after "Retry now" exactly one `turn/cancel` on the page's sockets and one
 *   `cancelRequested` in the host's log, then the real terminal.
 * - An approval open across a drop stays on show once (marked offline while the connection is
 *   down); the host asks again after the reconnect, and Approve then runs the tool. Deny pressed
 *   while offline is kept and sent when the host asks again.
 */
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { buildDemoPage, pageWords, startDemoHost, startPageProxy, type DemoHost, type DemoHostOptions, type PageProxy } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

/** A message, then a shell tool that prints a line every 100 ms for ~6 s, then a message: it completes by itself. */
const BUILD = join(repoRoot, "test/fixtures/models/session-build.json");
/** One tool call that asks first (`approval: true`), then a last message. */
const APPROVE = join(repoRoot, "recipes/models/approve-tool.json");
/** What Chromium logs when a WebSocket cannot connect (the host is down, or the proxy refuses): the browser's line, not the page's. */
const REFUSED = /^WebSocket connection to '\S+' failed: /;

let browser: Browser;
let ui: { dir: string; remove(): void };
const cleanups: Array<() => Promise<unknown> | unknown> = [];

beforeAll(async () => {
  ui = await buildDemoPage();
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
}, 60_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await browser?.close();
  ui?.remove();
});

/** What the page showed at one DOM change. */
interface Frame {
  /** Which page load (its `performance.timeOrigin`). */
  load: number;
  connection: string;
  /** The last turn's `data-phase` and outcome line ("" before there is a turn). */
  phase: string;
  outcome: string;
  stop: string;
  stopDisabled: boolean;
  busy: string | null;
  /** The open dialog's item id, or "" when closed; and whether its question is live. */
  dialog: string;
  dialogLive: string;
}

interface Demo {
  host: DemoHost;
  proxy: PageProxy | undefined;
  page: Page;
  /** Every frame the page showed, in order, across reloads. */
  frames: Frame[];
  /** What the page sent and received on its WebSockets (every socket, in order). */
  sent: Record<string, unknown>[];
  received: Record<string, unknown>[];
  problems: string[];
}

/**
 * A page on a fresh host. With `proxy`, the page (and so its socket) goes through a TCP proxy the
 * test can cut; with `restartable`, the host can be crashed and started again where it was.
 */
async function openDemo(options: DemoHostOptions & { proxy?: boolean } = {}): Promise<Demo> {
  // The proxy comes first (the host allows its origin); it reads the host's port per connection.
  const target = { port: 0 };
  const proxy = options.proxy === true ? await startPageProxy(() => target.port) : undefined;
  if (proxy !== undefined) cleanups.push(() => proxy.close());
  const host = await startDemoHost(ui.dir, { ...options, allowOrigins: proxy === undefined ? [] : [`http://127.0.0.1:${proxy.port}`] });
  target.port = host.port;
  cleanups.push(() => host.stop());
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  cleanups.push(() => page.close());
  const frames: Frame[] = [];
  const sent: Record<string, unknown>[] = [];
  const received: Record<string, unknown>[] = [];
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !REFUSED.test(message.text())) problems.push(`console.error: ${message.text()}`);
  });
  page.on("websocket", (socket) => {
    socket.on("framesent", ({ payload }) => sent.push(JSON.parse(String(payload)) as Record<string, unknown>));
    socket.on("framereceived", ({ payload }) => received.push(JSON.parse(String(payload)) as Record<string, unknown>));
  });
  await page.exposeFunction("recordFrame", (json: string) => frames.push(JSON.parse(json) as Frame));
  await page.addInitScript(() => {
    addEventListener("DOMContentLoaded", () => {
      let last = "";
      const record = () => {
        const turn = document.querySelector<HTMLElement>(".turn:last-child");
        const stop = document.querySelector<HTMLButtonElement>("#stop") as HTMLButtonElement;
        const dialog = document.querySelector<HTMLDialogElement>("#approval") as HTMLDialogElement;
        const frame = JSON.stringify({
          load: performance.timeOrigin,
          connection: document.querySelector<HTMLElement>("#connection")?.dataset["connection"] ?? "",
          phase: turn?.dataset["phase"] ?? "",
          outcome: turn?.querySelector(".outcome")?.textContent ?? "",
          stop: stop.textContent ?? "",
          stopDisabled: stop.disabled,
          busy: stop.getAttribute("aria-busy"),
          dialog: dialog.open ? (dialog.dataset["itemId"] ?? "?") : "",
          dialogLive: dialog.open ? (dialog.dataset["live"] ?? "") : "",
        });
        if (frame === last) return;
        last = frame;
        void (window as unknown as { recordFrame(json: string): Promise<void> }).recordFrame(frame);
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      record();
    });
  });
  await page.goto(proxy === undefined ? host.pageUrl : proxy.pageUrl(host));
  await page.waitForSelector("#start:not([disabled])");
  return { host, proxy, page, frames, sent, received, problems };
}

const waitForOutput = (page: Page, text: string, timeout = 15_000) =>
  page.waitForFunction((t) => (document.querySelector(".turn:last-child .tool-output")?.textContent ?? "").includes(t), text, { timeout });
const waitForPhase = (page: Page, phase: string, timeout = 15_000) => page.waitForSelector(`.turn:last-child[data-phase="${phase}"]`, { timeout });
const outcome = (page: Page) => page.textContent(".turn:last-child .outcome");

/** The host's logged terminals, as the page words them. */
function loggedTerminals(host: DemoHost): string[] {
  return host
    .sessionLog()
    .filter((record) => record["type"] === "turnCompleted")
    .map(pageWords);
}
const cancelsLogged = (host: DemoHost) => host.sessionLog().filter((record) => record["type"] === "cancelRequested");

/** The phases the last turn showed, each change once. */
function phases(frames: Frame[]): string[] {
  const seen: string[] = [];
  for (const { phase } of frames) if (phase !== "" && seen.at(-1) !== phase) seen.push(phase);
  return seen;
}

/** Start a turn from the prompt box. */
async function start(page: Page, text: string): Promise<void> {
  await page.fill("#prompt", text);
  await page.click("#start");
}

/** Cut the page's socket at the proxy and refuse new ones: the page sees its connection drop. */
async function dropConnection(demo: Demo): Promise<void> {
  demo.proxy?.refuse(true);
  demo.proxy?.cut();
  await demo.page.waitForSelector('#connection[data-connection="reconnecting"]', { timeout: 5_000 });
}

describe("the Stop-button app on the session layer: drops, restarts, reloads and Stops, in Chromium against the real host", { timeout: 60_000 }, () => {
  it("a drop from the network: the turn reads reconnecting…, never failed; the page reconnects by itself and shows the real terminal, its output whole", async () => {
    const demo = await openDemo({ model: BUILD, proxy: true });
    const { page, host } = demo;
    await start(page, "Build it");
    await waitForOutput(page, "step 3\n");
    await dropConnection(demo);
    await waitForPhase(page, "reconnecting", 5_000);
    expect(await outcome(page)).toBe("reconnecting…");
    expect(await page.textContent("#connection-text")).toMatch(/^reconnecting… \(/);
    expect(await page.isVisible("#reconnect")).toBe(true);
    await page.waitForTimeout(1_500); // attempts fail meanwhile: still reconnecting, not failed
    expect(await outcome(page)).toBe("reconnecting…");
    expect(cancelsLogged(host)).toHaveLength(0);

    demo.proxy?.refuse(false); // the page retries by itself (no click)
    await page.waitForSelector('#connection[data-connection="connected"]', { timeout: 10_000 });
    await waitForPhase(page, "ended", 20_000);
    const [terminal] = loggedTerminals(host);
    expect(terminal).toBe("completed");
    expect(await outcome(page)).toBe(terminal);
    expect(await page.isVisible("#reconnect")).toBe(false);
    // The tool's output whole, once: the replay merged by revision, not appended twice.
    const completed = host
      .sessionLog()
      .filter((record) => record["type"] === "notification" && record["method"] === "item/completed")
      .map((record) => (record["params"] as { item: { kind: string; visibleOutput?: string } }).item)
      .find((item) => item.kind === "toolCall");
    expect(await page.textContent(".turn:last-child .tool-output")).toBe(completed?.visibleOutput);
    expect(completed?.visibleOutput).toMatch(/step 60\nbuilt\n$/);

    const shown = phases(demo.frames);
    expect(shown.slice(shown.indexOf("reconnecting"))).toEqual(["reconnecting", "running", "ended"]);
    expect(demo.frames.filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    expect(demo.problems).toEqual([]);
  });

  it("the host SIGKILLed and restarted on the same --data, port and --token-file: the host's own 'failed: host restarted', nothing invented before it", async () => {
    const demo = await openDemo({ model: BUILD, restartable: true });
    const { page, host } = demo;
    await start(page, "Build it");
    await waitForOutput(page, "step 3\n");
    await host.crash();
    await page.waitForSelector('#connection[data-connection="reconnecting"]', { timeout: 5_000 });
    await waitForPhase(page, "reconnecting", 5_000);
    expect(await outcome(page)).toBe("reconnecting…");

    await host.restart();
    await waitForPhase(page, "ended", 30_000);
    const [terminal] = loggedTerminals(host);
    expect(terminal).toBe("the host restarted");
    expect(await outcome(page)).toBe(terminal);
    expect(await page.getAttribute(".turn:last-child .outcome", "data-tone")).toBe("failed");
    expect(await page.getAttribute("#connection", "data-connection")).toBe("connected");
    // Before the host's terminal, the page said reconnecting, never failed or unknown.
    const ended = demo.frames.findIndex((frame) => frame.phase === "ended");
    expect(demo.frames.slice(0, ended).filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    // After the drop: reconnecting, then (the session open again, the host's replay right behind) the terminal.
    const shown = phases(demo.frames);
    expect(shown.at(-1)).toBe("ended");
    expect(shown.slice(shown.indexOf("reconnecting"), -1).every((phase) => phase === "reconnecting" || phase === "running")).toBe(true);
    expect(shown).toContain("reconnecting");
    expect(await page.locator(".turn").count()).toBe(1);
    expect(demo.problems).toEqual([]);
  });

  it("a reload mid-turn, then a reload while stopping: the page resumes, and shows Stopping… from the click, across the reload, until the real terminal; one cancel", async () => {
    const demo = await openDemo();
    const { page, host } = demo;
    await start(page, "Build the project");
    await waitForOutput(page, "[3/60]");
    await page.reload();
    await page.waitForSelector("#start:not([disabled])");
    expect(await page.textContent("#status")).toMatch(/^Resumed the session/);
    expect(await page.getAttribute(".turn:last-child", "data-phase")).toBe("running");
    await waitForOutput(page, "[6/60]"); // it streams on
    expect(await page.getAttribute("#stop", "data-state")).toBe("running");

    const clicked = demo.frames.length;
    await page.click("#stop");
    await waitForOutput(page, "SIGTERM");
    await page.reload(); // while the tool drains
    await page.waitForSelector("#start:not([disabled])");
    expect(await page.textContent("#stop")).toBe("Stopping…");
    await waitForPhase(page, "ended", 15_000);
    const [terminal] = loggedTerminals(host);
    expect(terminal).toBe("you stopped it (cancelled during tool execution)");
    expect(await outcome(page)).toBe(terminal);
    expect(await page.textContent("#status")).toBe(terminal);

    // From the click to the terminal, in both loads: the turn and the button said Stopping…
    // (the second load shows the turn once its session is open).
    const after = demo.frames.slice(clicked);
    const last = after.findIndex((frame) => frame.outcome === terminal);
    const stopping = after.slice(0, last).filter((frame) => frame.phase !== "");
    expect(stopping.length).toBeGreaterThan(0);
    expect(new Set(stopping.map((frame) => frame.load)).size).toBe(2);
    for (const frame of stopping) expect(frame).toMatchObject({ phase: "stopping", outcome: "Stopping…", stop: "Stopping…", busy: "true", stopDisabled: true });
    expect(demo.frames.filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    expect(cancelsLogged(host)).toHaveLength(1);
    expect(await page.locator(".turn").count()).toBe(1);
    expect(demo.problems).toEqual([]);
  });

  it("Stop pressed while disconnected: Stopping… at once and nothing reaches the host; after Retry now, exactly one cancel and the real terminal", async () => {
    const demo = await openDemo({ proxy: true });
    const { page, host } = demo;
    await start(page, "Build the project");
    await waitForOutput(page, "[3/60]");
    await dropConnection(demo);
    await waitForPhase(page, "reconnecting", 5_000);
    expect(await page.isDisabled("#stop")).toBe(false);
    const pressed = demo.frames.length;
    await page.dblclick("#stop");
    expect(await page.textContent("#stop")).toBe("Stopping…");
    expect(await page.getAttribute("#stop", "aria-busy")).toBe("true");
    expect(await page.isDisabled("#stop")).toBe(true);
    expect(await outcome(page)).toBe("Stopping…");
    await page.waitForTimeout(1_000);
    expect(cancelsLogged(host)).toHaveLength(0);
    expect(demo.sent.filter((message) => message["method"] === "turn/cancel")).toHaveLength(0);

    demo.proxy?.refuse(false);
    await page.click("#reconnect"); // Retry now
    await page.waitForSelector('#connection[data-connection="connected"]', { timeout: 10_000 });
    await waitForPhase(page, "ended", 15_000);
    const [terminal] = loggedTerminals(host);
    expect(terminal).toBe("you stopped it (cancelled during tool execution)");
    expect(await outcome(page)).toBe(terminal);
    expect(await page.textContent("#status")).toBe(terminal);
    expect(cancelsLogged(host)).toHaveLength(1);
    expect(demo.sent.filter((message) => message["method"] === "turn/cancel")).toHaveLength(1);
    expect(await page.textContent(".turn:last-child .tool-output")).toMatch(/cleanup step 3 of 3 done\nbuild stopped after \d+ of 60 modules/);
    // From the press to the terminal: Stopping…, across the reconnect.
    const after = demo.frames.slice(pressed);
    const last = after.findIndex((frame) => frame.outcome === terminal);
    expect(last).toBeGreaterThan(0);
    for (const frame of after.slice(0, last)) expect(frame).toMatchObject({ phase: "stopping", outcome: "Stopping…", stop: "Stopping…", busy: "true" });
    expect(demo.frames.filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    expect(demo.problems).toEqual([]);
  });

  it("an approval open across a drop is shown once, marked offline while down, and Approve after the reconnect runs the tool", async () => {
    const demo = await openDemo({ model: APPROVE, proxy: true });
    const { page, host } = demo;
    await start(page, "Publish");
    await page.waitForSelector('#approval[open][data-live="true"]', { timeout: 15_000 });
    const itemId = await page.getAttribute("#approval", "data-item-id");
    expect(await page.isVisible("#approval-offline")).toBe(false);

    await dropConnection(demo);
    await page.waitForSelector('#approval[open][data-live="false"]', { timeout: 5_000 });
    expect(await page.getAttribute("#approval", "data-item-id")).toBe(itemId);
    expect(await page.isVisible("#approval-offline")).toBe(true);
    expect(await page.getAttribute(".turn:last-child", "data-phase")).toBe("reconnecting");

    demo.proxy?.refuse(false);
    await page.waitForSelector('#approval[open][data-live="true"]', { timeout: 10_000 });
    expect(await page.getAttribute("#approval", "data-item-id")).toBe(itemId);
    expect(await page.isVisible("#approval-offline")).toBe(false);
    await page.click("#approval-approve");
    await waitForPhase(page, "ended", 15_000);
    const [terminal] = loggedTerminals(host);
    expect(terminal).toBe("completed");
    expect(await outcome(page)).toBe(terminal);
    expect(await page.getAttribute(".turn:last-child .tool", "data-approval")).toBe("approved");
    expect(await page.textContent(".turn:last-child .tool-output")).toContain("published");
    expect(await page.isVisible("#approval")).toBe(false);

    // Asked once per connection, shown once: the dialog stayed open on the same item from the first ask to the answer.
    const asked = demo.received.filter((message) => message["method"] === "tool/approve");
    expect(asked.map((message) => (message["params"] as { itemId: string }).itemId)).toEqual([itemId, itemId]);
    const runs: string[] = [];
    for (const { dialog } of demo.frames) if (runs.at(-1) !== dialog) runs.push(dialog);
    expect(runs.filter((run) => run !== "")).toEqual([itemId]);
    const approvals = host
      .sessionLog()
      .filter((record) => record["type"] === "approval")
      .map((record) => String(record["state"]));
    expect(approvals[0]).toBe("pending");
    expect(approvals.at(-1)).toBe("approved");
    expect(approvals.filter((state) => state === "approved")).toHaveLength(1);
    expect(demo.frames.filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    expect(demo.problems).toEqual([]);
  });

  it("Stop pressed offline with the dialog open: the question is withdrawn at once; after the reconnect the one kept turn/cancel goes and every answer is cancelled, nothing runs", async () => {
    const demo = await openDemo({ model: APPROVE, proxy: true });
    const { page, host } = demo;
    await start(page, "Publish");
    await page.waitForSelector('#approval[open][data-live="true"]', { timeout: 15_000 });
    await dropConnection(demo);
    await page.waitForSelector('#approval[open][data-live="false"]', { timeout: 5_000 });
    await page.click("#stop");
    // Withdrawn: the dialog closes, so no Approve is left to press.
    await page.waitForSelector("#approval:not([open])", { state: "attached", timeout: 5_000 });
    const sentOffline = demo.sent.length;

    demo.proxy?.refuse(false);
    await waitForPhase(page, "ended", 20_000);
    const [terminal] = loggedTerminals(host);
    expect(terminal).toMatch(/^you stopped it/);
    expect(await outcome(page)).toBe(terminal);
    // On the new connection: the one kept turn/cancel, and every answer to a re-asked question cancelled.
    const after = demo.sent.slice(sentOffline);
    const answers = after.filter((message) => "result" in message && !("method" in message)).map((message) => message["result"]);
    for (const answer of answers) expect(answer).toMatchObject({ decision: "cancelled" });
    expect(after.filter((message) => message["method"] === "turn/cancel")).toHaveLength(1);
    const states = host
      .sessionLog()
      .filter((record) => record["type"] === "approval")
      .map((record) => String(record["state"]));
    expect(states).not.toContain("approved");
    expect(states.at(-1)).toMatch(/^cancelled/);
    expect(await page.textContent(".turn:last-child .tool-output")).toBe(""); // nothing ran
    expect(demo.frames.filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    expect(demo.problems).toEqual([]);
  });

  it("Deny pressed while offline: the dialog closes, the answer is kept and sent when the host asks again; nothing runs", async () => {
    const demo = await openDemo({ model: APPROVE, proxy: true });
    const { page, host } = demo;
    await start(page, "Publish");
    await page.waitForSelector('#approval[open][data-live="true"]', { timeout: 15_000 });
    const itemId = await page.getAttribute("#approval", "data-item-id");
    await dropConnection(demo);
    await page.waitForSelector('#approval[open][data-live="false"]', { timeout: 5_000 });
    await page.click("#approval-deny");
    await page.waitForSelector("#approval:not([open])", { state: "attached", timeout: 5_000 });
    expect(await page.textContent("#status")).toMatch(/^Denied: shell: /);

    demo.proxy?.refuse(false);
    await waitForPhase(page, "ended", 20_000);
    const [terminal] = loggedTerminals(host);
    expect(await outcome(page)).toBe(terminal);
    expect(await page.getAttribute(".turn:last-child .tool", "data-approval")).toBe("denied");
    expect(await page.textContent(".turn:last-child .tool .item-status")).toBe("failed: denied by the user");
    // The host asked the new connection again, and the kept answer went back at once.
    const asked = demo.received.filter((message) => message["method"] === "tool/approve");
    expect(asked.map((message) => (message["params"] as { itemId: string }).itemId)).toEqual([itemId, itemId]);
    const answer = demo.sent.find((message) => message["id"] === asked[1]?.["id"] && "result" in message);
    expect((answer?.["result"] as { decision?: string } | undefined)?.decision).toBe("deny");
    const states = host
      .sessionLog()
      .filter((record) => record["type"] === "approval")
      .map((record) => String(record["state"]));
    expect(states.at(-1)).toBe("denied");
    expect(await page.textContent(".turn:last-child .tool-output")).toBe(""); // nothing ran
    expect(demo.frames.filter((frame) => /^failed|^unknown/.test(frame.outcome))).toEqual([]);
    expect(demo.problems).toEqual([]);
  });
});
