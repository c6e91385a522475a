/**
 * The Stop-button app's Approve/Deny dialog in headless Chromium, against the real reference host
 * over real sockets, with the bundled model (models/demo.json): after the ~15 s build, its deploy
 * call says `"approval": true`, so the host asks `tool/approve` before it runs. The deploy writes
 * `release.txt` into `$MUSE_DEMO_STAGING` (a fresh directory per test): that file is how a test
 * knows whether the tool ran.
 * - Approve (from the keyboard): the dialog is labelled, takes focus and gives it back; the deploy
 *   runs and its output streams; the turn completes.
 * - Deny: the call ends failed "denied by the user", nothing ran, the turn goes on to its terminal.
 * - Stop with the dialog open: the SDK answers `cancelled` before `turn/cancel`, the dialog closes,
 *   Stop reads "Stopping…" until the turn's own terminal, `cancelled` with the host's reason; the
 *   host's log has the question withdrawn and nothing ran.
 * - Reload with the dialog open: the host asks the resumed page again and the dialog is back.
 * The four run at once (each on its own host), since each spends ~15 s waiting for the build.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it, type ExpectStatic } from "vitest";
import { buildDemoPage, pageWords, startDemoHost, type DemoHost } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

/** The build (~15 s) plus a margin for two shared cores running four of these at once. */
const ASK_TIMEOUT_MS = 45_000;
/** One test: a host, the build, the question, the answer and the terminal. */
const TEST_TIMEOUT_MS = 90_000;
const DENY_REASON = "denied in the Stop-button app";

let browser: Browser;
let ui: { dir: string; remove(): void };

beforeAll(async () => {
  ui = await buildDemoPage();
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  ui?.remove();
});

interface Demo {
  host: DemoHost;
  page: Page;
  /** The deploy's side effect, present only if the tool ran. */
  release: string;
  /** What the page sent and received on its WebSockets (every load). */
  sent: Record<string, unknown>[];
  received: Record<string, unknown>[];
  problems: string[];
  close(): Promise<void>;
}

/** A page on a fresh host whose deploy writes into a fresh staging directory. */
async function openDemo(): Promise<Demo> {
  const staging = mkdtempSync(join(tmpdir(), "muse-demo-staging-"));
  const host = await startDemoHost(ui.dir, { env: { MUSE_DEMO_STAGING: staging } });
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const sent: Record<string, unknown>[] = [];
  const received: Record<string, unknown>[] = [];
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console.error: ${message.text()}`);
  });
  page.on("websocket", (socket) => {
    socket.on("framesent", ({ payload }) => sent.push(JSON.parse(String(payload)) as Record<string, unknown>));
    socket.on("framereceived", ({ payload }) => received.push(JSON.parse(String(payload)) as Record<string, unknown>));
  });
  await page.goto(host.pageUrl);
  await page.waitForSelector("#start:not([disabled])");
  return {
    host,
    page,
    release: join(staging, "release.txt"),
    sent,
    received,
    problems,
    async close() {
      await page.close();
      await host.stop();
      rmSync(staging, { recursive: true, force: true });
    },
  };
}

/** Start the turn with the Start button (which then has the focus) and wait for the dialog. */
async function startAndWaitForTheQuestion(page: Page): Promise<void> {
  await page.fill("#prompt", "Build and deploy");
  await page.focus("#start");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#approval[open]", { timeout: ASK_TIMEOUT_MS });
}

const activeId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? "");
/** The deploy call's element (the turn's second tool call). */
const deploy = ".turn:last-child .tool:nth-of-type(2)";
const outcome = (page: Page) => page.textContent(".turn:last-child .outcome");
const waitForTerminal = (page: Page) =>
  page.waitForFunction(() => document.querySelector('.turn:last-child[data-phase="ended"] .outcome')?.textContent !== undefined, undefined, {
    timeout: 15_000,
  });

/** The host's logged terminal of the session's one turn, as the page words it. */
function loggedTerminal(host: DemoHost, expect: ExpectStatic): string {
  const terminals = host.sessionLog().filter((record) => record["type"] === "turnCompleted");
  expect(terminals).toHaveLength(1);
  return pageWords(terminals[0] as Record<string, unknown>);
}

/** The approval states the host logged for its one question, in order. */
const loggedApprovals = (host: DemoHost) =>
  host
    .sessionLog()
    .filter((record) => record["type"] === "approval")
    .map((record) => (record["reason"] === undefined ? String(record["state"]) : `${String(record["state"])} (${String(record["reason"])})`));

/** The host's `tool/approve` requests the page received. */
const questions = (received: Record<string, unknown>[]) => received.filter((message) => message["method"] === "tool/approve");

/** Checks the open dialog: a labelled dialog for the deploy, with focus on Deny. */
async function expectTheQuestion(page: Page, expect: ExpectStatic): Promise<void> {
  const dialog = page.getByRole("dialog", { name: "Allow this tool to run?" });
  expect(await dialog.isVisible()).toBe(true);
  expect(await page.getAttribute("#approval", "aria-describedby")).toBe("approval-what approval-command");
  expect(await page.textContent("#approval-tool")).toBe("shell");
  expect(await page.textContent("#approval-command")).toMatch(/^# deploy the build to staging, ~2 s\nstaging=/);
  expect(await activeId(page)).toBe("approval-deny"); // focus moved in, on the choice that runs nothing
  expect(await page.getAttribute(deploy, "data-approval")).toBe("pending");
  expect(await page.textContent(`${deploy} .item-status`)).toBe("waiting for your approval…");
  expect(await page.textContent("#status")).toMatch(/^Approval needed: shell: # deploy the build to staging/);
  expect(await page.getAttribute("#stop", "data-state")).toBe("running"); // Stop stays usable: the dialog is not modal
  expect(await page.isDisabled("#stop")).toBe(false);
}

describe("the Stop-button app's Approve/Deny dialog, in Chromium against the real host", { concurrent: true, timeout: TEST_TIMEOUT_MS }, () => {
  it("Approve (keyboard): the dialog takes focus and gives it back, the deploy runs and its output streams, the turn completes", async ({ expect }) => {
    const demo = await openDemo();
    try {
      const { page, host } = demo;
      await startAndWaitForTheQuestion(page);
      await expectTheQuestion(page, expect);
      expect(await page.textContent("#approval-turn")).toBe("Build and deploy");
      expect(existsSync(demo.release)).toBe(false);

      await page.keyboard.press("Shift+Tab"); // Deny → Approve
      expect(await activeId(page)).toBe("approval-approve");
      await page.keyboard.press("Enter");
      await page.waitForSelector("#approval:not([open])", { state: "attached", timeout: 5_000 });
      expect(await activeId(page)).toBe("start"); // focus is back where it was
      expect(await page.textContent("#status")).toMatch(/^Approved: shell: # deploy/);

      // The deploy runs, and its output streams while it runs.
      await page.waitForFunction((sel) => document.querySelector(`${sel} .tool-output`)?.textContent?.includes("[1/5]"), deploy, { timeout: 10_000 });
      const early = (await page.textContent(`${deploy} .tool-output`)) ?? "";
      expect(early).not.toContain("deployed:");
      expect(await page.textContent(`${deploy} .item-status`)).toBe("approved, running…");
      await waitForTerminal(page);
      expect(await page.textContent(`${deploy} .tool-output`)).toMatch(/\[5\/5\] uploaded batch 5 of 5\ndeployed: .*release\.txt/);
      expect(await page.textContent(`${deploy} .item-status`)).toBe("approved, completed");
      expect(await outcome(page)).toBe(loggedTerminal(host, expect));
      expect(await outcome(page)).toBe("completed");
      expect(existsSync(demo.release)).toBe(true);
      expect(loggedApprovals(host)).toEqual(["pending", "approved"]);
      const answers = demo.sent.filter((message) => message["id"] === questions(demo.received)[0]?.["id"] && "result" in message);
      expect(answers.map((message) => message["result"])).toEqual([{ decision: "approve" }]);
      expect(demo.problems).toEqual([]);
    } finally {
      await demo.close();
    }
  });

  it("MSP 2.1: a button per offered decision and the grant's rule; Always allow runs the deploy, approved by the new session grant", async ({ expect }) => {
    const demo = await openDemo();
    try {
      const { page, host } = demo;
      await startAndWaitForTheQuestion(page);
      const offered = questions(demo.received)[0]?.["params"] as Record<string, unknown> | undefined;
      expect(offered?.["decisions"]).toEqual(["approve", "approveForSession", "deny", "denyAndStop"]);
      for (const id of ["approval-approve", "approval-deny", "approval-always", "approval-stop"]) expect(await page.isVisible(`#${id}`), id).toBe(true);
      expect(await page.textContent("#approval-always")).toBe("Always allow in this session");
      expect(await page.textContent("#approval-stop")).toBe("Deny and stop");
      expect(await page.isVisible("#approval-grant")).toBe(true);
      expect(await page.textContent("#approval-grant")).toBe(
        "“Always allow” approves this exact shell call (the same arguments) for the rest of this session.",
      );
      await page.click("#approval-always");
      await page.waitForSelector("#approval:not([open])", { state: "attached", timeout: 5_000 });
      expect(await page.textContent("#status")).toMatch(/^Approved for this session: shell: # deploy/);
      await waitForTerminal(page);
      expect(await outcome(page)).toBe("completed"); // describeEnding: the reason "completed" only repeats the terminal
      expect(existsSync(demo.release)).toBe(true);
      const answers = demo.sent.filter((message) => message["id"] === questions(demo.received)[0]?.["id"] && "result" in message);
      expect(answers.map((message) => message["result"])).toEqual([{ decision: "approveForSession" }]);
      const grants = host.sessionLog().filter((record) => record["type"] === "grant");
      expect(grants).toHaveLength(1);
      expect(grants[0]?.["grant"]).toMatchObject({ tool: "shell", args: offered?.["args"], match: "exact" });
      expect(demo.problems).toEqual([]);
    } finally {
      await demo.close();
    }
  });

  it("MSP 2.1: Deny and stop denies the deploy (nothing runs) and ends the turn cancelled, cause user", async ({ expect }) => {
    const demo = await openDemo();
    try {
      const { page, host } = demo;
      await startAndWaitForTheQuestion(page);
      await page.click("#approval-stop");
      await page.waitForSelector("#approval:not([open])", { state: "attached", timeout: 5_000 });
      await waitForTerminal(page);
      expect(await page.getAttribute(deploy, "data-approval")).toBe("denied");
      expect(await outcome(page)).toBe(loggedTerminal(host, expect));
      const terminal = host.sessionLog().find((record) => record["type"] === "turnCompleted");
      expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
      expect(existsSync(demo.release)).toBe(false);
      expect(demo.problems).toEqual([]);
    } finally {
      await demo.close();
    }
  });

  it('Deny: the call ends failed "denied by the user", nothing runs, and the turn goes on to its terminal', async ({ expect }) => {
    const demo = await openDemo();
    try {
      const { page, host } = demo;
      await startAndWaitForTheQuestion(page);
      await expectTheQuestion(page, expect);
      await page.click("#approval-deny");
      await page.waitForSelector("#approval:not([open])", { state: "attached", timeout: 5_000 });
      await waitForTerminal(page);
      expect(await page.getAttribute(deploy, "data-status")).toBe("failed");
      expect(await page.getAttribute(deploy, "data-approval")).toBe("denied");
      expect(await page.textContent(`${deploy} .item-status`)).toBe("failed: denied by the user");
      expect(await page.textContent(`${deploy} .tool-output`)).toBe("");
      // The script went on after the deny: its last step's message, then the terminal.
      expect(await page.textContent(".turn:last-child .message:last-of-type")).toBe("That is the end of this turn.");
      expect(await outcome(page)).toBe(loggedTerminal(host, expect));
      expect(await outcome(page)).toBe("completed");
      expect(existsSync(demo.release)).toBe(false);
      expect(loggedApprovals(host)).toEqual(["pending", `denied (${DENY_REASON})`]);
      const completed = host
        .sessionLog()
        .filter((record) => record["type"] === "notification" && record["method"] === "item/completed")
        .map((record) => (record["params"] as { item: Record<string, unknown> }).item)
        .find((item) => item["approval"] !== undefined);
      expect(completed).toMatchObject({ status: "failed", failureReason: "denied by the user", error: { code: "TOOL_DENIED", message: DENY_REASON } });
      expect(demo.problems).toEqual([]);
    } finally {
      await demo.close();
    }
  });

  it("Stop with the dialog open: answered cancelled before turn/cancel, the dialog closes, Stopping… until the terminal, cancelled with the host's reason, nothing ran", async ({
    expect,
  }) => {
    const demo = await openDemo();
    try {
      const { page, host } = demo;
      await startAndWaitForTheQuestion(page);
      await expectTheQuestion(page, expect);
      await page.evaluate(() => {
        const w = window as unknown as { timeline: { stop: string; busy: string | null; dialogOpen: boolean; outcome: string }[] };
        w.timeline = [];
        new MutationObserver(() => {
          const stop = document.querySelector<HTMLButtonElement>("#stop") as HTMLButtonElement;
          w.timeline.push({
            stop: stop.textContent ?? "",
            busy: stop.getAttribute("aria-busy"),
            dialogOpen: document.querySelector<HTMLDialogElement>("#approval")?.open === true,
            outcome: document.querySelector(".turn:last-child .outcome")?.textContent ?? "",
          });
        }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      });
      await page.dblclick("#stop");
      await waitForTerminal(page);

      const terminal = loggedTerminal(host, expect);
      expect(terminal).toBe("you stopped it (cancelled while awaiting approval)");
      expect(await outcome(page)).toBe(terminal);
      expect(await page.textContent("#status")).toBe(terminal);
      expect(await page.isVisible("#approval")).toBe(false);
      // Focus stayed with the Stop button the user moved to (the browser drops it when the button disables
      // itself): not back on Start, where a second Enter would start a new turn.
      expect(["stop", ""]).toContain(await activeId(page));
      // From the click to the terminal: the dialog closed at once, and Stop read Stopping… (busy) until the terminal.
      const frames = await page.evaluate(
        () => (window as unknown as { timeline: { stop: string; busy: string | null; dialogOpen: boolean; outcome: string }[] }).timeline,
      );
      const first = frames.findIndex((f) => f.stop === "Stopping…");
      const last = frames.findIndex((f) => f.outcome === terminal);
      expect(first).toBeGreaterThanOrEqual(0);
      expect(last).toBeGreaterThan(first);
      for (const f of frames.slice(first, last)) expect(f).toMatchObject({ stop: "Stopping…", busy: "true" });
      expect(frames.slice(first).every((f) => !f.dialogOpen)).toBe(true);

      // The page answered the question `cancelled` before it sent the one turn/cancel.
      const [question] = questions(demo.received);
      const answerAt = demo.sent.findIndex((message) => message["id"] === question?.["id"] && "result" in message);
      const cancelAt = demo.sent.findIndex((message) => message["method"] === "turn/cancel");
      expect(demo.sent[answerAt]?.["result"]).toEqual({ decision: "cancelled", reason: "turn cancelled" });
      expect(cancelAt).toBeGreaterThan(answerAt);
      expect(demo.sent.filter((message) => message["method"] === "turn/cancel")).toHaveLength(1);
      // The host withdrew the question and ran nothing.
      expect(loggedApprovals(host)[0]).toBe("pending");
      expect(loggedApprovals(host).at(-1)).toMatch(/^cancelled/);
      expect(await page.getAttribute(deploy, "data-status")).toBe("cancelled");
      expect(await page.textContent(`${deploy} .item-status`)).toBe("cancelled: tool call aborted before dispatch");
      expect(await page.textContent(`${deploy} .tool-output`)).toBe("");
      expect(existsSync(demo.release)).toBe(false);
      expect(host.sessionLog().filter((record) => record["type"] === "cancelRequested")).toHaveLength(1);
      expect(demo.problems).toEqual([]);
    } finally {
      await demo.close();
    }
  });

  it("reload with the dialog open: the host asks the resumed page again, the dialog is back, and Escape denies", async ({ expect }) => {
    const demo = await openDemo();
    try {
      const { page, host } = demo;
      await startAndWaitForTheQuestion(page);
      await expectTheQuestion(page, expect);
      const itemId = await page.getAttribute("#approval", "data-item-id");

      await page.reload();
      await page.waitForSelector("#approval[open]", { timeout: 10_000 });
      expect(await page.getAttribute("#approval", "data-item-id")).toBe(itemId);
      expect(await page.textContent("#approval-turn")).toBe("Build and deploy");
      expect(await activeId(page)).toBe("approval-deny");
      expect(await page.textContent("#approval-command")).toMatch(/^# deploy the build to staging/);
      // Asked twice, once per page load, for the same call.
      const asked = questions(demo.received).map((message) => (message["params"] as { itemId: string }).itemId);
      expect(asked).toEqual([itemId, itemId]);

      await page.keyboard.press("Escape");
      await waitForTerminal(page);
      expect(await page.isVisible("#approval")).toBe(false);
      expect(await page.textContent(`${deploy} .item-status`)).toBe("failed: denied by the user");
      expect(await outcome(page)).toBe(loggedTerminal(host, expect));
      expect(existsSync(demo.release)).toBe(false);
      expect(loggedApprovals(host)).toEqual(["pending", `denied (${DENY_REASON})`]);
      expect(await page.locator(".turn").count()).toBe(1);
      expect(demo.problems).toEqual([]);
    } finally {
      await demo.close();
    }
  });
});
