/**
 * The page script of docs/connecting-from-a-browser.md (docs/examples/browser/stop-button-page.ts)
 * runs as written: bundled for the browser, served by the real reference host
 * (`muse-host serve --ws --ui-dir`) beside the guide's page
 * (docs/examples/browser/stop-button-page.html), and driven in headless Chromium: it connects with
 * the token from the fragment, streams the message text, and its Stop button shows Stopping…
 * until the turn's own terminal.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { startDemoHost, type DemoHost } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

let browser: Browser;
let dir: string;
let host: DemoHost;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "muse-guide-page-"));
  await build({
    absWorkingDir: repoRoot,
    entryPoints: [join(repoRoot, "docs/examples/browser/stop-button-page.ts")],
    outfile: join(dir, "app.js"),
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    logLevel: "silent",
  });
  copyFileSync(join(repoRoot, "docs/examples/browser/stop-button-page.html"), join(dir, "index.html"));
  host = await startDemoHost(dir);
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await host?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("docs/connecting-from-a-browser.md: the page script, in Chromium against the real host", () => {
  it("connects with the fragment's token, streams the message, and stops the turn", async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    await page.goto(host.pageUrl);
    await page.waitForSelector("#start:not([disabled])");
    expect(page.url()).not.toContain("token");
    expect(await page.textContent("#status")).toBe("connected");
    await page.click("#start");
    await page.waitForFunction(() => document.querySelector("#output")?.textContent?.startsWith("Building the project."), undefined, { timeout: 10_000 });
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "running");
    await page.waitForTimeout(1_000); // into the tool
    await page.click("#stop");
    expect(await page.textContent("#stop")).toBe("Stopping…");
    expect(await page.getAttribute("#stop", "aria-busy")).toBe("true");
    await page.waitForFunction(() => document.querySelector("#status")?.textContent?.startsWith("cancelled"), undefined, { timeout: 10_000 });
    expect(await page.textContent("#status")).toBe("cancelled: cancelled during tool execution");
    expect(await page.isDisabled("#start")).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  });
});
