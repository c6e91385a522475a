/**
 * docs/examples/react-chat/app.tsx, that exact file, bundled as the guide bundles it (React's
 * development build, so StrictMode double-invokes effects and renders) and served by the real
 * reference host (`--ui-dir`) behind a TCP proxy that a test can cut or make refuse, and that
 * records every WebSocket message both ways. The page is driven in real Chromium.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { chromium, type Browser, type Page } from "playwright-core";
import { inject } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { startProxy, startWsHost, type TcpProxy, type WsHost } from "../helpers/wsHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

export const BUILD = join(repoRoot, "test/fixtures/models/session-build.json");
export const APPROVE = join(repoRoot, "recipes/models/approve-tool.json");
export const HELLO = join(repoRoot, "test/fixtures/models/hello.json");
const sdk = (path: string) => join(repoRoot, "src", path);

/** The built app in a folder of its own, and a Chromium; `close()` removes both. */
export interface ChatBuild {
  readonly dir: string;
  readonly browser: Browser;
  close(): Promise<void>;
}

export async function buildChat(): Promise<ChatBuild> {
  const dir = mkdtempSync(join(tmpdir(), "muse-react-chat-"));
  await build({
    entryPoints: [join(repoRoot, "docs/examples/react-chat/app.tsx")],
    outfile: join(dir, "app.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"development"' },
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
  const browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
  return {
    dir,
    browser,
    async close() {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One page of the app on its own host behind its own proxy. */
export interface Chat {
  host: WsHost;
  proxy: TcpProxy;
  page: Page;
  /** JSON-RPC frames the page handed its sockets (Chromium's record; the proxy's is `proxy.messages()`). */
  sent: Record<string, unknown>[];
  sockets: () => number;
  problems: string[];
  url: string;
}

/** Options of {@link openChat}. */
export interface ChatOptions {
  /** The host's `--script` (the model named "default"). */
  model?: string;
  /** More host flags (`--model NAME=PATH`, …). */
  hostArgs?: string[];
  /** The page's query string (`?model=…`). */
  search?: string;
}

/**
 * The app on a fresh host behind a proxy, opened at the address the host prints, once its
 * connection is open; every data-phase a turn shows is recorded in the page (`phases`). What to
 * close is pushed onto `cleanups`.
 */
export async function openChat(chat: ChatBuild, cleanups: Array<() => unknown>, options: ChatOptions = {}): Promise<Chat> {
  let hostPort = 0;
  const proxy = await startProxy(() => hostPort);
  cleanups.push(() => proxy.close());
  const host = await startWsHost(options.model ?? BUILD, {
    args: ["--ui-dir", chat.dir, "--allow-origin", `http://127.0.0.1:${proxy.port}`, ...(options.hostArgs ?? [])],
  });
  cleanups.push(() => host.stop());
  hostPort = host.port;
  const page = await chat.browser.newPage();
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
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(`console.${message.type()}: ${message.text()}`);
  });
  const url = `http://127.0.0.1:${proxy.port}/${options.search ?? ""}#token=${encodeURIComponent(host.token)}`;
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

/** The data-phase values this page load showed, in order, each once per change. */
export const phases = (page: Page): Promise<string[]> => page.evaluate(() => (window as unknown as { phases: string[] }).phases);
export const phase = (page: Page): Promise<string | null> => page.getAttribute("li[data-turn]", "data-phase");
export const sentMethod = (chat: Chat, method: string): Record<string, unknown>[] => chat.sent.filter((m) => m["method"] === method);

/** Send `prompt` from the form. */
export async function send(page: Page, prompt: string): Promise<void> {
  await page.fill('textarea[aria-label="Prompt"]', prompt);
  await page.click('button[type="submit"]');
}

/** Send a turn of the build model and wait until its tool has printed a few lines. */
export async function startBuild(page: Page, prompt = "build it"): Promise<void> {
  await send(page, prompt);
  await page.waitForFunction(() => document.querySelector("pre.tool")?.textContent?.includes("step 3") === true, undefined, { timeout: 15_000 });
}

/**
 * Presses "Retry now" if it is still there. The session's own backoff may reconnect first (the
 * button then leaves the DOM), which is as good: what the test asserts is what the page shows next.
 */
export async function retryNow(page: Page): Promise<void> {
  const button = page.locator('[role="status"] button');
  try {
    await button.click({ timeout: 5_000 });
  } catch (error) {
    if (await button.isVisible()) throw error;
  }
}
