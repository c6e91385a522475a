/**
 * `npx tsx scripts/demo-screenshots.ts`: the screenshots of docs/stop-button.md, taken from the
 * real thing: the Stop-button app (built from the sources) served by the reference host with
 * models/demo.json, in headless Chromium (provisioned as the browser tests provision it).
 * Writes docs/images/stop-button-{running,stopping,ended,asking}.png ("asking": a second tab's turn
 * after its build, with the Approve/Deny dialog open). Run it by hand when the app's look changes
 * (it takes about 25 s), and commit the images; no test writes into docs/.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { buildDemoPage, startDemoHost } from "../test/browser/demoHost.js";
import { chromiumLaunchOptions, provisionChromium } from "../test/browser/provisionChromium.js";

const IMAGES = fileURLToPath(new URL("../docs/images/", import.meta.url));

const ui = await buildDemoPage();
// The deploy the dialog asks about writes into a directory of its own (it is denied below, so it stays empty).
const staging = mkdtempSync(join(tmpdir(), "muse-demo-staging-"));
const host = await startDemoHost(ui.dir, { env: { MUSE_DEMO_STAGING: staging } });
const browser = await chromium.launch(chromiumLaunchOptions(await provisionChromium()));
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 760 }, colorScheme: "light" });
  const outputHas = (text: string) =>
    page.waitForFunction((t) => (document.querySelector(".turn:last-child .tool-output")?.textContent ?? "").includes(t), text, { timeout: 15_000 });
  await page.goto(host.pageUrl);
  await page.waitForSelector("#start:not([disabled])");
  await page.fill("#prompt", "Build the project");
  await page.click("#start");
  await outputHas("[9/60]");
  mkdirSync(IMAGES, { recursive: true });
  const shot = async (name: string) => {
    const path = join(IMAGES, `stop-button-${name}.png`);
    await page.screenshot({ path });
    console.log(`demo-screenshots: wrote ${path}`);
  };
  await shot("running");
  await page.click("#stop");
  await outputHas("cleanup step 2 of 3 done");
  if ((await page.textContent("#stop")) !== "Stopping…") throw new Error("the Stop button does not read Stopping… while the tool drains");
  await shot("stopping");
  await page.waitForFunction(() => document.querySelector(".turn:last-child .outcome")?.textContent?.startsWith("cancelled"), undefined, { timeout: 15_000 });
  await shot("ended");
  await page.close();

  // A fresh tab (its own session): one turn, built, asking before it deploys.
  const asking = await browser.newPage({ viewport: { width: 900, height: 1100 }, colorScheme: "light" });
  await asking.goto(host.pageUrl);
  await asking.waitForSelector("#start:not([disabled])");
  await asking.fill("#prompt", "Build and deploy to staging");
  await asking.click("#start");
  await asking.waitForSelector("#approval[open]", { timeout: 45_000 });
  await asking.keyboard.press("Shift+Tab"); // a keyboard user's focus ring on Approve
  const path = join(IMAGES, "stop-button-asking.png");
  await asking.screenshot({ path });
  console.log(`demo-screenshots: wrote ${path}`);
  await asking.click("#approval-deny");
  await asking.waitForSelector('.turn[data-phase="ended"]', { timeout: 15_000 });
} finally {
  await browser.close();
  await host.stop();
  ui.remove();
  rmSync(staging, { recursive: true, force: true });
}
