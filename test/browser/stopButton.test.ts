import { writeFileSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { chromiumLaunchOptions } from "./provisionChromium.js";

let server: Server;
let browser: Browser;
let url = "";

beforeAll(async () => {
  const bundle = await build({
    entryPoints: ["test/browser/stopButtonPage.ts"],
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  const script = bundle.outputFiles[0]?.text ?? "";
  expect(script).not.toMatch(/node:/);
  const html = `<!doctype html><meta charset="utf-8"><title>Stop</title><style>body{font:16px system-ui;margin:2em}button{font-size:18px;padding:.4em 1.2em}</style><button id="stop">Stop</button><p id="status"></p><script type="module">${script}</script>`;
  server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(html));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  // Provisioned once per run by test/browser/globalSetup.ts (the npm-shipped Chromium, or Debian's).
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe("a Stop button in a real browser", () => {
  it("shows stopping from the click until the turn's own terminal, then ended: cancelled", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "running");
    await page.click("#stop");
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "stopping");
    expect(await page.textContent("#stop")).toBe("Stopping…");
    expect(await page.isDisabled("#stop")).toBe(true);
    await page.waitForFunction(() => document.querySelector("#status")?.textContent?.startsWith("ended"), undefined, { timeout: 5_000 });
    expect(await page.textContent("#status")).toBe("ended: cancelled (cancelled during tool execution)");
    expect(await page.evaluate(() => document.body.dataset["history"])).toBe("starting,running,stopping,ended");
    mkdirSync(".tmp", { recursive: true });
    writeFileSync(".tmp/stop-button.png", await page.screenshot());
    expect(errors).toEqual([]);
    await page.close();
  });
});
