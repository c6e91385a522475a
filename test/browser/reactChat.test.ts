/**
 * docs/examples/react-chat (the guide's React app on @muse-code/sdk/react, under StrictMode) in
 * real Chromium with real React, against the real reference host over real sockets. The host
 * serves the page (`--ui-dir`); a TCP proxy in front of it lets a test drop the page's socket from
 * the network side, or refuse new ones (the host unreachable). Each test asserts what the page
 * shows and what the host logged: one session and one socket under StrictMode, a turn shown
 * reconnecting (never failed) across a drop, one cancel for a double Stop or a Stop pressed while
 * disconnected, a reload mid-turn and while stopping, a host SIGKILLed and restarted, and an
 * approval open across a drop shown once.
 */
import { mkdtempSync, copyFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { startProxy, startWsHost, type TcpProxy, type WsHost } from "../helpers/wsHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

/**
 * Presses "Retry now" if it is still there. The session's own backoff may reconnect first (the
 * button then leaves the DOM), which is as good: what the test asserts is what the page shows next.
 */
async function retryNow(page: Page): Promise<void> {
  const button = page.locator('[role="status"] button');
  try {
    await button.click({ timeout: 5_000 });
  } catch (error) {
    if (await button.isVisible()) throw error;
  }
}

const BUILD = join(repoRoot, "test/fixtures/models/session-build.json");
const APPROVE = join(repoRoot, "recipes/models/approve-tool.json");
const sdk = (path: string) => join(repoRoot, "src", path);

let browser: Browser;
let dir: string;
const cleanups: Array<() => Promise<unknown> | unknown> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "muse-react-chat-"));
  await build({
    entryPoints: [join(repoRoot, "docs/examples/react-chat/app.tsx")],
    outfile: join(dir, "app.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"development"' }, // React's development build: StrictMode double-invokes effects and renders
    alias: {
      "@muse-code/sdk/session": sdk("session/index.ts"),
      "@muse-code/sdk/react": sdk("react/index.ts"),
      "@muse-code/sdk/websocket": sdk("websocket/index.ts"),
      "@muse-code/sdk/ui": sdk("ui/index.ts"),
      "@muse-code/sdk": sdk("index.ts"),
    },
    logLevel: "silent",
  });
  copyFileSync(join(repoRoot, "docs/examples/react-chat/index.html"), join(dir, "index.html"));
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
}, 60_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Chat {
  host: WsHost;
  proxy: TcpProxy;
  page: Page;
  /** JSON-RPC frames the page sent, and the sockets it opened. */
  sent: Record<string, unknown>[];
  sockets: () => number;
  problems: string[];
  url: string;
}

/** The app on a fresh host behind a proxy; every data-phase a turn shows is recorded in the page. */
async function openChat(model = BUILD): Promise<Chat> {
  let hostPort = 0;
  const proxy = await startProxy(() => hostPort);
  cleanups.push(() => proxy.close());
  const host = await startWsHost(model, { args: ["--ui-dir", dir, "--allow-origin", `http://127.0.0.1:${proxy.port}`] });
  cleanups.push(() => host.stop());
  hostPort = host.port;
  const page = await browser.newPage();
  cleanups.push(() => page.close());
  const sent: Record<string, unknown>[] = [];
  const problems: string[] = [];
  let sockets = 0;
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("websocket", (socket) => {
    sockets++;
    socket.on("framesent", ({ payload }) => sent.push(JSON.parse(String(payload)) as Record<string, unknown>));
  });
  page.on("load", () => void recordPhases(page));
  const url = `http://127.0.0.1:${proxy.port}/#token=${encodeURIComponent(host.token)}`;
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(`console.${message.type()}: ${message.text()}`);
  });
  await page.goto(url);
  try {
    await page.waitForSelector('[role="status"][data-state="open"]', { timeout: 15_000 });
  } catch (error) {
    throw new Error(`the page did not open: ${String(error)}\nproblems: ${problems.join("\n")}\nbody: ${await page.content()}`, { cause: error });
  }
  return { host, proxy, page, sent, sockets: () => sockets, problems, url };
}

async function recordPhases(page: Page): Promise<void> {
  await page
    .evaluate(() => {
      const w = window as unknown as { phases: string[] };
      w.phases ??= [];
      const record = () => {
        for (const li of Array.from(document.querySelectorAll("li[data-phase]"))) {
          const phase = li.getAttribute("data-phase") as string;
          if (w.phases.at(-1) !== phase) w.phases.push(phase);
        }
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-phase"] });
      record();
    })
    .catch(() => {});
}

const phases = (page: Page) => page.evaluate(() => (window as unknown as { phases: string[] }).phases);
const phase = (page: Page) => page.getAttribute("li[data-turn]", "data-phase");
const sentMethod = (chat: Chat, method: string) => chat.sent.filter((m) => m["method"] === method);

async function startTurn(page: Page, prompt = "build it"): Promise<void> {
  await page.fill('textarea[aria-label="Prompt"]', prompt);
  await page.click('button[type="submit"]');
  await page.waitForFunction(() => document.querySelector("pre.tool")?.textContent?.includes("step 3") === true, undefined, { timeout: 15_000 });
}

describe("the React chat app (docs/examples/react-chat) in Chromium", () => {
  it("under StrictMode: one socket, one session/create; a double Stop is one turn/cancel, and the turn ends with the host's terminal", async () => {
    const chat = await openChat();
    expect(chat.sockets()).toBe(1);
    expect(sentMethod(chat, "session/create")).toHaveLength(1);
    await startTurn(chat.page);
    await chat.page.dblclick("button.stop");
    await chat.page.waitForSelector('li[data-phase="ended"]', { timeout: 15_000 });
    expect(await chat.page.textContent("p.phase")).toBe("you stopped it");
    expect(await phases(chat.page)).toEqual(["starting", "running", "stopping", "ended"]);
    expect(sentMethod(chat, "turn/cancel")).toHaveLength(1);
    expect(chat.host.cancelsLogged()).toHaveLength(1);
    expect(chat.problems).toEqual([]);
  }, 60_000);

  it("the socket dropped from the network side: the turn shows reconnecting, never failed, then its real state and terminal", async () => {
    const chat = await openChat();
    await startTurn(chat.page);
    chat.proxy.cut();
    await chat.page.waitForSelector('li[data-phase="reconnecting"]');
    expect(await chat.page.getAttribute('[role="status"]', "data-state")).toBe("reconnecting");
    await chat.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    expect(await chat.page.textContent("p.phase")).toBe("completed");
    const seen = await phases(chat.page);
    expect(seen).toContain("reconnecting");
    expect(seen.every((p) => ["starting", "running", "reconnecting", "ended"].includes(p))).toBe(true);
    expect(chat.sockets()).toBe(2);
  }, 60_000);

  it("Stop pressed while disconnected: stopping across the drop, exactly one cancel in the host's log after the reconnect, the real terminal", async () => {
    const chat = await openChat();
    await startTurn(chat.page);
    chat.proxy.refuse(true);
    chat.proxy.cut();
    await chat.page.waitForSelector('li[data-phase="reconnecting"]');
    await chat.page.dblclick("button.stop");
    expect(await phase(chat.page)).toBe("stopping");
    expect(chat.host.cancelsLogged()).toHaveLength(0);
    chat.proxy.refuse(false);
    await retryNow(chat.page);
    await chat.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    expect(await chat.page.textContent("p.phase")).toBe("you stopped it");
    expect(chat.host.cancelsLogged()).toHaveLength(1);
  }, 60_000);

  it("a reload mid-turn resumes the turn; a reload while stopping (pressed offline) still shows stopping until the real terminal, one cancel", async () => {
    const chat = await openChat();
    await startTurn(chat.page);
    await chat.page.reload();
    await chat.page.waitForSelector('[role="status"][data-state="open"]');
    await chat.page.waitForFunction(() => document.querySelector("pre.tool")?.textContent?.includes("step 10") === true, undefined, { timeout: 15_000 });
    // Stop pressed with the host out of reach, then a reload: the page shows the kept Stop, then the terminal once back.
    chat.proxy.refuse(true);
    chat.proxy.cut();
    await chat.page.waitForSelector('li[data-phase="reconnecting"]');
    await chat.page.click("button.stop");
    await chat.page.waitForSelector('li[data-phase="stopping"]');
    await chat.page.reload();
    await chat.page.waitForSelector('li[data-phase="stopping"]');
    chat.proxy.refuse(false);
    await retryNow(chat.page);
    await chat.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    // This page load showed the turn stopping until the host's terminal, nothing else.
    expect(await phases(chat.page)).toEqual(["stopping", "ended"]);
    expect(await chat.page.textContent("p.phase")).toBe("you stopped it");
    expect(chat.host.cancelsLogged()).toHaveLength(1);
    expect(await chat.page.locator("li[data-turn]").count()).toBe(1);
  }, 60_000);

  it("the host SIGKILLed and restarted on the same data, port and token file: the page shows the host's 'host restarted' terminal", async () => {
    const chat = await openChat();
    await startTurn(chat.page);
    await chat.host.crash();
    await chat.page.waitForSelector('li[data-phase="reconnecting"]');
    await chat.host.restart();
    await chat.page.waitForSelector('li[data-phase="ended"]', { timeout: 30_000 });
    expect(await chat.page.textContent("p.phase")).toBe("the host restarted");
    expect(await phases(chat.page)).not.toContain("unknown");
  }, 60_000);

  it("an approval open across a drop is shown once, answered after the reconnect, and the tool runs", async () => {
    const chat = await openChat(APPROVE);
    await chat.page.fill('textarea[aria-label="Prompt"]', "publish");
    await chat.page.click('button[type="submit"]');
    await chat.page.waitForSelector('[role="dialog"]');
    chat.proxy.cut();
    await chat.page.waitForSelector('li[data-phase="reconnecting"]');
    expect(await chat.page.locator('[role="dialog"]').count()).toBe(1);
    await chat.page.waitForSelector('li[data-phase="running"]', { timeout: 20_000 });
    expect(await chat.page.locator('[role="dialog"]').count()).toBe(1);
    await chat.page.click('[role="dialog"] button:text("Approve")');
    await chat.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    expect(await chat.page.textContent("p.phase")).toBe("completed");
    expect(await chat.page.textContent("pre.tool")).toContain("published");
  }, 60_000);
});
