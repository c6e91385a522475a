/**
 * The demo's steer box (demo/steerBox.ts) in headless Chromium against the real reference host:
 * typed while a turn runs, it sends one `turn/steer` for that turn; the turn shows the steering
 * as the user's message, marked heard, and the model's reply repeats it. Once the turn ended the
 * box is disabled again.
 */
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, inject, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { buildDemoPage, startDemoHost } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

/** The first turn reads the repo, then waits (up to 20 s) for steering at its second step and repeats what it heard. */
const STEER = join(repoRoot, "test/fixtures/models/steer.json");

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

it("the steer box steers the running turn: one turn/steer, the steering shown as the user's, heard, and repeated by the model", async () => {
  const host = await startDemoHost(ui.dir, { model: STEER });
  cleanups.push(() => host.stop());
  const page = await browser.newPage();
  cleanups.push(() => page.close());
  const sent: Record<string, unknown>[] = [];
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("websocket", (socket) => socket.on("framesent", ({ payload }) => sent.push(JSON.parse(String(payload)) as Record<string, unknown>)));
  await page.goto(host.pageUrl);
  await page.waitForSelector("#start:not([disabled])");
  expect(await page.isDisabled("#steer")).toBe(true);

  await page.fill("#prompt", "Move the build to pnpm");
  await page.click("#start");
  await page.waitForSelector("#steer:not([disabled])", { timeout: 15_000 });
  const turnId = await page.getAttribute("#steer-form", "data-turn-id");
  await page.fill("#steer-input", "keep the lockfile");
  await page.click("#steer");

  await page.waitForSelector('.turn:last-child .message[data-author="user"][data-status="completed"]', { timeout: 20_000 });
  await page.waitForSelector('.turn:last-child[data-phase="ended"]', { timeout: 20_000 });
  const texts = await page.$$eval(".turn:last-child .message", (nodes) => nodes.map((n) => n.textContent ?? ""));
  expect(texts).toContain("keep the lockfilesteering: heard");
  expect(texts.at(-1)).toBe("Heard you: keep the lockfile. Done.");
  const steers = sent.filter((m) => m["method"] === "turn/steer");
  expect(steers).toHaveLength(1);
  expect(steers[0]?.["params"]).toMatchObject({ turnId, input: [{ type: "text", text: "keep the lockfile" }] });
  expect(await page.isDisabled("#steer")).toBe(true);
  expect(problems).toEqual([]);
}, 90_000);
