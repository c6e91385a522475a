/**
 * The Stop-button app renders MSP 2.0's streamed text by appends (issue 19), in headless Chromium
 * against the real reference host over real sockets, with a model of one long message (~79 000
 * characters, emoji and non-Latin text among them, in 96-character chunks, so ~820 `item/delta`s).
 * The page is instrumented: `CharacterData.prototype.appendData` is wrapped to count the calls per
 * text element, a MutationObserver counts every text change and every node removed in it, and
 * each socket counts the `item/delta` frames it receives before the SDK reads them.
 * - Live: the message's text element is the same node from the first delta to the completion;
 *   nothing in it is removed or set whole: every change to its text is an `appendData`, at least
 *   one per `item/delta` the page received, into blocks that stay about 2 048 code units long
 *   (demo/segmentedText.ts), so no append costs the text so far. It ends equal, code unit for
 *   code unit, to the text the host's session log folds to and to the model's message: a long
 *   message renders fully.
 * - A reload in the middle of it: the session layer kept the message in sessionStorage as it was
 *   at the kept cursor; the page shows that at once, the resume replays only what came after the
 *   cursor, and the page appends it and the live deltas to the same element, ending with the
 *   whole message. A reload after the turn shows the whole message from the tab's storage.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { foldItem, type Item, type MessageItem } from "@muse-code/sdk";
import { SEGMENT_CHARS } from "../../demo/segmentedText.js";
import { buildDemoPage, startDemoHost, type DemoHost } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

/** The long message: 900 numbered lines of ~100 code units, with emoji (surrogate pairs) and other scripts. */
const LONG = Array.from(
  { length: 900 },
  (_, i) => `line ${String(i + 1).padStart(3, "0")} of 900: streamed by item/delta, appended to one Text node 😀 — Grüße, こんにちは, ✓\n`,
).join("");
const MESSAGE = ".turn:last-child .message";
/** The message's text element (its blocks of text; the tags are beside it). */
const TEXT = `${MESSAGE} > .text`;
/** Where the reload test reloads: well into the message. @unit UTF-16 code units */
const RELOAD_AT = 32 * 1024;
/** The models, by name: the pause before each chunk. @unit milliseconds */
const MODELS = { fast: 5, slow: 25 };

let browser: Browser;
let ui: { dir: string; remove(): void };
let modelDir: string;
const hosts: DemoHost[] = [];

beforeAll(async () => {
  ui = await buildDemoPage();
  modelDir = mkdtempSync(join(tmpdir(), "muse-demo-long-"));
  // ~820 chunks: 5 ms apart, ~4 s of streaming; 25 ms apart, ~21 s, of which ~13 s after the page passes the size it
  // remembers of a text (7 s in): time enough to reload in the middle even on a busy machine.
  for (const [name, chunkDelayMs] of Object.entries(MODELS)) {
    const model = {
      description: "One long streamed message (test/browser/demoStreaming.test.ts).",
      turns: [{ steps: [{ text: LONG, chunkSize: 96, chunkDelayMs }] }],
    };
    writeFileSync(join(modelDir, `${name}.json`), JSON.stringify(model));
  }
  browser = await chromium.launch(chromiumLaunchOptions(inject("chromium")));
}, 60_000);
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.stop()));
});
afterAll(async () => {
  await browser?.close();
  ui?.remove();
  if (modelDir !== undefined) rmSync(modelDir, { recursive: true, force: true });
});

/** A page on a fresh host with the long model, instrumented (see the header), and what its sockets received. */
async function openDemo(model: keyof typeof MODELS): Promise<{ host: DemoHost; page: Page; received: Record<string, unknown>[][]; problems: string[] }> {
  const host = await startDemoHost(ui.dir, { model: join(modelDir, `${model}.json`) });
  hosts.push(host);
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console.error: ${message.text()}`);
  });
  // One list of received messages per page load (per socket).
  const received: Record<string, unknown>[][] = [];
  page.on("websocket", (socket) => {
    const messages: Record<string, unknown>[] = [];
    received.push(messages);
    socket.on("framereceived", ({ payload }) => messages.push(JSON.parse(String(payload)) as Record<string, unknown>));
  });
  await page.addInitScript(() => {
    // Per text element (a streamed text's .text or .tool-output): appendData calls, text changes, nodes removed.
    type Counts = { appends: number; changes: number; removed: number };
    const w = window as unknown as { counts: WeakMap<Element, Counts>; deltas: number };
    w.counts = new WeakMap();
    // And the item/delta frames the page's sockets received, each counted before the SDK reads it.
    w.deltas = 0;
    const NativeWebSocket = window.WebSocket;
    window.WebSocket = class extends NativeWebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        this.addEventListener("message", ({ data }) => {
          if (typeof data === "string" && data.includes('"method":"item/delta"')) w.deltas++;
        });
      }
    };
    const countsOf = (node: Node | null): Counts | undefined => {
      const box = (node instanceof Element ? node : node?.parentElement)?.closest(".text, .tool-output");
      if (box === null || box === undefined) return undefined;
      if (!w.counts.has(box)) w.counts.set(box, { appends: 0, changes: 0, removed: 0 });
      return w.counts.get(box);
    };
    const appendData = CharacterData.prototype.appendData;
    CharacterData.prototype.appendData = function (this: CharacterData, data: string) {
      const counts = countsOf(this);
      if (counts !== undefined) counts.appends++;
      appendData.call(this, data);
    };
    new MutationObserver((records) => {
      for (const record of records) {
        const counts = countsOf(record.target);
        if (counts === undefined) continue;
        if (record.type === "characterData") counts.changes++;
        counts.removed += record.removedNodes.length;
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(host.pageUrl);
  await page.waitForSelector("#start:not([disabled])");
  return { host, page, received, problems };
}

/** The message item as the host's session log folds it: its item/started, every item/delta and patch, and its item/completed. */
function foldedFromLog(host: DemoHost, itemId: string): { folded: Item; completed: Item; deltas: number } {
  let folded: Item | undefined;
  let completed: Item | undefined;
  let deltas = 0;
  for (const record of host.sessionLog()) {
    if (record["type"] !== "notification") continue;
    const method = String(record["method"]);
    const params = record["params"] as Record<string, unknown>;
    const id = method === "item/delta" ? params["itemId"] : (params["item"] as { itemId?: unknown } | undefined)?.itemId;
    if (id !== itemId) continue;
    if (method === "item/completed") {
      completed = params["item"] as Item;
      continue;
    }
    if (method === "item/delta") deltas++;
    const next = foldItem(folded, method, params);
    if (typeof next === "string") throw new Error(next);
    if (next !== undefined) folded = next;
  }
  if (folded === undefined || completed === undefined) throw new Error(`the host's log has no whole life of item ${itemId}`);
  return { folded, completed, deltas };
}

/** The item/delta notifications for `itemId` among `messages`. */
const deltasOf = (messages: Record<string, unknown>[] | undefined, itemId: string) =>
  (messages ?? []).filter((m) => m["method"] === "item/delta" && (m["params"] as { itemId?: unknown }).itemId === itemId);

/**
 * The message's text element: what it holds, its blocks and longest text node, and since
 * {@link keepTextElement}: whether it is the element kept then, its appendData calls, text
 * changes and nodes removed, and the item/delta frames received.
 */
async function messageText(page: Page) {
  // Let the observer's records of the last changes arrive first.
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
  return page.evaluate((selector) => {
    const w = window as unknown as { kept?: Element | null; counts: WeakMap<Element, { appends: number; changes: number; removed: number }>; deltas: number };
    const box = document.querySelector(selector);
    const nodes: Text[] = [];
    const walker = box === null ? undefined : document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    while (walker?.nextNode()) nodes.push(walker.currentNode as Text);
    return {
      data: box?.textContent ?? undefined,
      blocks: box?.children.length ?? 0,
      longestNode: Math.max(0, ...nodes.map((node) => node.length)),
      same: box !== null && box === w.kept,
      deltas: w.deltas,
      connected: w.kept?.isConnected === true,
      ...((box === null ? undefined : w.counts.get(box)) ?? { appends: 0, changes: 0, removed: 0 }),
    };
  }, TEXT);
}
/** Keep the message's text element, and count from zero (in the page: no frame is read meanwhile). */
const keepTextElement = (page: Page) =>
  page.evaluate((selector) => {
    const w = window as unknown as { kept?: Element | null; counts: WeakMap<Element, unknown>; deltas: number };
    w.kept = document.querySelector(selector);
    if (w.kept !== null) w.counts.delete(w.kept);
    w.deltas = 0;
  }, TEXT);
const waitForLength = (page: Page, length: number) =>
  page.waitForFunction(
    ({ selector, length }) => (document.querySelector(selector)?.textContent?.length ?? 0) > length,
    { selector: TEXT, length },
    { timeout: 20_000 },
  );
const waitForCompleted = (page: Page) => page.waitForSelector(`${MESSAGE}[data-status="completed"]`, { timeout: 60_000 });

describe("the Stop-button app renders streamed text by appends, in Chromium against the real host", { timeout: 120_000 }, () => {
  it("a streamed message is appended to, never rendered again: the same element, nothing removed, every change an appendData, bounded blocks; a long message renders fully, equal to the host's folded text", async () => {
    const { host, page, received, problems } = await openDemo("fast");
    expect(LONG.length).toBeGreaterThan(RELOAD_AT * 1.5);
    await page.click("#start");
    await page.waitForSelector(TEXT); // item/started: the element, empty
    await keepTextElement(page);
    await waitForLength(page, 20_000);
    expect(await messageText(page)).toMatchObject({ same: true, removed: 0 }); // mid-stream
    await waitForCompleted(page);
    await page.waitForFunction(() => document.querySelector(".turn:last-child")?.getAttribute("data-phase") === "ended");

    const itemId = (await page.getAttribute(MESSAGE, "data-item-id")) ?? "";
    const shown = await messageText(page);
    const log = foldedFromLog(host, itemId);
    const live = deltasOf(received[0], itemId);
    expect(live.length).toBe(log.deltas);
    expect(live.length).toBeGreaterThan(800);
    // The same element from start to completion; nothing in it removed; every text change an append, at
    // least one per delta (two when a delta crosses the end of a block).
    expect(shown).toMatchObject({ same: true, connected: true, removed: 0, changes: shown.appends });
    expect(shown.deltas).toBeGreaterThan(700); // since the element was kept
    expect(shown.appends).toBeGreaterThanOrEqual(shown.deltas);
    expect(shown.appends).toBeLessThanOrEqual(shown.deltas + shown.blocks);
    // Blocks of about SEGMENT_CHARS (each ends at the first line break past it): no append touched more.
    expect(shown.blocks).toBeGreaterThanOrEqual(Math.floor(LONG.length / (SEGMENT_CHARS + 128)));
    expect(shown.longestNode).toBeLessThanOrEqual(SEGMENT_CHARS + 128);
    // Whole: the text the log folds to, the completed item's, the model's.
    expect((log.folded as MessageItem).text).toBe((log.completed as MessageItem).text);
    expect(shown.data === (log.folded as MessageItem).text).toBe(true);
    expect(shown.data === LONG).toBe(true);
    expect(await page.textContent(".turn:last-child .outcome")).toBe("completed");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("reload in the middle of a long message: the kept copy shows at once, the replay after the cursor is appended to it, and it ends whole; after the turn, a reload shows it whole from the tab's storage", async () => {
    const { host, page, received, problems } = await openDemo("slow");
    await page.click("#start");
    await waitForLength(page, RELOAD_AT);
    // The session layer keeps the message in sessionStorage (written within 200 ms of a change), with the cursor: the
    // index under the session's key, the turn's record under `…:turn:<turnId>`, a long text's length in its `$pieces`.
    await page.waitForFunction(
      (min) => {
        const index = JSON.parse(sessionStorage.getItem("muse-demo:session") ?? "{}") as { cursor?: string; turns?: { turnId: string }[] };
        const last = index.turns?.at(-1);
        if (index.cursor === undefined || last === undefined) return false;
        const record = JSON.parse(sessionStorage.getItem(`muse-demo:session:turn:${last.turnId}`) ?? "{}") as {
          items?: { text?: string; $pieces?: { text?: number } }[];
        };
        const item = record.items?.[0];
        return (item?.text?.length ?? item?.$pieces?.text ?? 0) >= min;
      },
      RELOAD_AT,
      { timeout: 5_000 },
    );
    const itemId = (await page.getAttribute(MESSAGE, "data-item-id")) ?? "";

    await page.reload();
    await page.waitForSelector("#start:not([disabled])");
    expect(await page.textContent("#status")).toMatch(/^Resumed the session/);
    await keepTextElement(page); // the kept copy is on show by now, and the resume's answer is in
    // The answer to the resume carried the message whole, in progress, as it was at the kept cursor.
    const answer = received[1]?.find((m) => (m["result"] as { replayed?: unknown } | undefined)?.replayed !== undefined);
    const [resumed] = ((answer?.["result"] as { items?: Item[] }).items ?? []).filter((item) => item.itemId === itemId) as MessageItem[];
    expect(resumed?.status).toBe("inProgress");
    expect(resumed?.text.length).toBeGreaterThanOrEqual(RELOAD_AT);
    expect(LONG.startsWith(resumed?.text ?? "-")).toBe(true);
    // Once the session is open, the page shows at least that copy (and what followed).
    const opened = await messageText(page);
    expect(opened.data?.length).toBeGreaterThanOrEqual(resumed?.text.length ?? Infinity);
    expect(LONG.startsWith(opened.data ?? "-")).toBe(true);

    await waitForCompleted(page);
    const shown = await messageText(page);
    // From then on, every delta was appended to that element, and nothing in it removed.
    expect(shown).toMatchObject({ same: true, connected: true, removed: 0, changes: shown.appends });
    expect(shown.deltas).toBeGreaterThan(100);
    expect(shown.appends).toBeGreaterThanOrEqual(shown.deltas);
    expect(shown.appends).toBeLessThanOrEqual(shown.deltas + shown.blocks);
    expect(shown.data === LONG).toBe(true);
    expect(shown.data === (foldedFromLog(host, itemId).folded as MessageItem).text).toBe(true);

    // The turn is over: a reload resumes after its end, so nothing sends the message again, and
    // the page shows it whole from what the session layer kept in the tab's storage.
    await page.waitForFunction(() => document.querySelector(".turn:last-child")?.getAttribute("data-phase") === "ended");
    await page.waitForTimeout(300); // the session is written within 100 ms of a change
    await page.reload();
    await page.waitForSelector("#start:not([disabled])");
    expect((await messageText(page)).data === LONG).toBe(true);
    expect(await page.getAttribute(MESSAGE, "data-status")).toBe("completed");
    expect(deltasOf(received[2], itemId)).toHaveLength(0);
    expect(await page.textContent(".turn:last-child .outcome")).toBe("completed");
    expect(problems).toEqual([]);
    await page.close();
  });
});
