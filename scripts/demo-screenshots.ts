/**
 * `npx tsx scripts/demo-screenshots.ts`: the screenshots of docs/stop-button.md, taken from the
 * real thing: the Stop-button app (built from the sources) served by the reference host with
 * models/demo.json, in headless Chromium (provisioned as the browser tests provision it).
 * Writes docs/images/stop-button-{running,stopping,ended}.png. Run it by hand when the app's look
 * changes, and commit the images; no test writes into docs/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { buildDemoPage, startDemoHost } from "../test/browser/demoHost.js";
import { chromiumLaunchOptions, provisionChromium } from "../test/browser/provisionChromium.js";

const IMAGES = fileURLToPath(new URL("../docs/images/", import.meta.url));

const ui = await buildDemoPage();
const host = await startDemoHost(ui.dir);
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
} finally {
  await browser.close();
  await host.stop();
  ui.remove();
}
