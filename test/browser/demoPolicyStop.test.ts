/**
 * The Stop-button app says how a turn ended in the SDK's words (issue 22), in headless Chromium
 * against the real reference host: a turn the model's time limit stops reads "stopped by policy:
 * turn time limit (1000 ms)" with the tokens it used, never as the user's Stop; a turn the user
 * stops reads "you stopped it", with its tokens too (a Stop still costs tokens).
 */
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { buildDemoPage, pageWords, startDemoHost, type DemoHost } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

/** A shell tool past the model's 1000 ms limit; its first step declares usage (412 in, 36 out, 120 reasoning). */
const TIME_LIMITED = join(repoRoot, "recipes/models/stop-by-time-limit.json");
/** A first step with usage (100 in, 5 out, 2 reasoning) whose shell tool sleeps 30 s; no time limit. */
const USAGE = join(repoRoot, "test/fixtures/models/usage.json");

let browser: Browser;
let ui: { dir: string; remove(): void };
const hosts: DemoHost[] = [];

beforeAll(async () => {
  ui = await buildDemoPage();
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
}, 60_000);
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
});
afterAll(async () => {
  await browser?.close();
  ui?.remove();
});

async function openDemo(model: string): Promise<{ host: DemoHost; page: Page; problems: string[] }> {
  const host = await startDemoHost(ui.dir, { model });
  hosts.push(host);
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  await page.goto(host.pageUrl);
  await page.waitForSelector("#start:not([disabled])");
  return { host, page, problems };
}

const ended = (page: Page) => page.waitForSelector('.turn:last-child[data-phase="ended"]', { timeout: 20_000 });
const outcome = (page: Page) => page.textContent(".turn:last-child .outcome");
const logged = (host: DemoHost) => host.sessionLog().filter((record) => record["type"] === "turnCompleted");

describe("the app words a terminal as describeTerminal does, with its usage", { timeout: 60_000 }, () => {
  it("a turn the time limit stops reads 'stopped by policy: turn time limit (1000 ms)' with its tokens, and nobody pressed Stop", async () => {
    const { host, page, problems } = await openDemo(TIME_LIMITED);
    await page.fill("#prompt", "Migrate the database");
    await page.click("#start");
    await ended(page);
    const text = "stopped by policy: turn time limit (1000 ms) (cancelled during tool execution); tokens 412 in, 36 out, 120 reasoning";
    expect(await outcome(page)).toBe(text);
    expect(await page.getAttribute(".turn:last-child .outcome", "data-tone")).toBe("cancelled");
    expect(await page.textContent("#status")).toBe(text);
    const [terminal, ...more] = logged(host);
    expect(more).toEqual([]);
    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "hook", reason: "turn time limit (1000 ms)" } });
    expect(pageWords(terminal as Record<string, unknown>)).toBe(text);
    // The one cancel the host logged is its own policy's, not a Stop from the page.
    expect(host.sessionLog().filter((record) => record["type"] === "cancelRequested")).toEqual([expect.objectContaining({ cause: terminal?.["cause"] })]);
    expect(await page.textContent(".turn:last-child .tool-output")).toContain("migration interrupted, rolled back");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a turn the user stops reads 'you stopped it' with the tokens it used", async () => {
    const { host, page, problems } = await openDemo(USAGE);
    await page.fill("#prompt", "Run it");
    await page.click("#start");
    await page.waitForFunction(() => /started \d+/.test(document.querySelector(".turn:last-child .tool-output")?.textContent ?? ""), undefined, {
      timeout: 15_000,
    });
    await page.click("#stop");
    await ended(page);
    const text = "you stopped it (cancelled during tool execution); tokens 100 in, 5 out, 2 reasoning";
    expect(await outcome(page)).toBe(text);
    expect(await page.textContent("#status")).toBe(text);
    expect(logged(host)).toEqual([expect.objectContaining({ terminal: "cancelled", cause: { kind: "user" } })]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
