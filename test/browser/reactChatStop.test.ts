/**
 * A Stop is final, through docs/examples/react-chat/app.tsx in real Chromium: with the host's
 * question ("publish @acme/widgets?") open, Stop is pressed online, offline, or offline and then
 * the page reloaded; then the user tries to approve (the button, if the page still shows one, and
 * the app's own answer callback otherwise). Whatever the page sends after the Stop, what the proxy
 * passes to the host holds no `approve`: every answer is `cancelled`, a kept Stop's `turn/cancel`
 * goes before any answer of the connection it goes on, the tool never runs (its item completes
 * `cancelled`, never "published"), and the turn ends with the host's own cancelled terminal.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ProxiedMessage } from "../helpers/wsHost.js";
import { APPROVE, buildChat, openChat, retryNow, send, type Chat, type ChatBuild } from "./reactChatPage.js";

let chat: ChatBuild;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  chat = await buildChat();
}, 60_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await chat?.close();
});

const APPROVE_BUTTON = '[role="dialog"] button:text("Approve")';

/** The publish turn, asking: its question is live on the page. */
async function asking(): Promise<Chat> {
  const c = await openChat(chat, cleanups, { model: APPROVE });
  await send(c.page, "publish");
  await c.page.waitForSelector(APPROVE_BUTTON, { timeout: 15_000 });
  return c;
}

/**
 * The user tries to approve after the Stop: clicks Approve if the page still shows it, and calls
 * the app's own answer callback (the `answer` prop its dialog was rendered with, from
 * useSessionTurn) either way, as a second tab or a stale render would. Returns whether a button was there.
 */
async function tryToApprove(page: Page): Promise<boolean> {
  const button = page.locator(APPROVE_BUTTON);
  const shown = (await button.count()) > 0;
  if (shown) await button.first().click();
  const called = await page.evaluate(() => {
    const dialog = document.querySelector('[role="dialog"]');
    if (dialog === null) return "no dialog";
    const key = Object.keys(dialog).find((k) => k.startsWith("__reactFiber$"));
    type Fiber = { child: Fiber | null; sibling: Fiber | null; memoizedProps?: { answer?: unknown; question?: { itemId: string } } };
    const stack: Array<Fiber | null> = [(dialog as unknown as Record<string, Fiber>)[key ?? ""]?.child ?? null];
    while (stack.length > 0) {
      const fiber = stack.pop();
      if (fiber === null || fiber === undefined) continue;
      const props = fiber.memoizedProps;
      if (typeof props?.answer === "function" && props.question !== undefined) {
        try {
          (props.answer as (itemId: string, decision: string) => unknown)(props.question.itemId, "approve");
          return "called";
        } catch (error) {
          return `threw: ${String(error)}`;
        }
      }
      stack.push(fiber.child, fiber.sibling);
    }
    return "no answer callback";
  });
  expect(["called", "no dialog"]).toContain(called);
  return shown;
}

/** The answers the page sent to the host's `tool/approve` requests, each with its index in the proxy's record. */
function approvalAnswers(messages: readonly ProxiedMessage[]): Array<{ at: number; connection: number; decision: unknown }> {
  const asked = new Set(
    messages.filter((m) => m.direction === "toPage" && m.message["method"] === "tool/approve").map((m) => `${m.connection}:${String(m.message["id"])}`),
  );
  return messages.flatMap((m, at) =>
    m.direction === "toHost" && m.message["method"] === undefined && asked.has(`${m.connection}:${String(m.message["id"])}`)
      ? [{ at, connection: m.connection, decision: (m.message["result"] as { decision?: unknown } | undefined)?.decision }]
      : [],
  );
}

/** What must hold once the turn ended, however Stop and Approve were pressed. */
async function stopWasFinal(c: Chat): Promise<void> {
  await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 30_000 });
  const messages = c.proxy.messages();
  const answers = approvalAnswers(messages);
  // No approve ever reached the host: every answer it got is cancelled.
  expect(answers.map((a) => a.decision)).not.toContain("approve");
  expect(answers.every((a) => a.decision === "cancelled")).toBe(true);
  // The tool never ran: its item closed as never dispatched.
  expect(await c.page.getAttribute("pre.tool", "data-status")).toBe("cancelled");
  expect(await c.page.textContent("pre.tool")).not.toContain("published");
  expect(c.host.logRecords().filter((r) => r["type"] === "approval" && r["state"] === "approved")).toEqual([]);
  // The host's own terminal, a user's cancel, once.
  const completed = messages.filter((m) => m.direction === "toPage" && m.message["method"] === "turn/completed").map((m) => m.message["params"]);
  expect(completed).toEqual([expect.objectContaining({ terminal: "cancelled", cause: { kind: "user" } })]);
  expect(await c.page.textContent("p.phase")).toBe("you stopped it");
  expect(c.host.cancelsLogged()).toHaveLength(1);
  expect(await c.page.locator('[role="dialog"]').count()).toBe(0);
}

/**
 * Press Stop inside the page and count the Approve buttons once React has rendered what the click
 * changed (after microtasks, before any animation frame or timer): the user's own Stop must not
 * leave a button to approve for a frame, even though streamed changes wait for one.
 */
async function approveButtonsAfterStop(page: Page): Promise<number> {
  return page.evaluate(async (label) => {
    const stop = document.querySelector<HTMLButtonElement>("button.stop");
    if (stop === null) throw new Error("no Stop button");
    stop.click();
    for (let i = 0; i < 20; i++) await Promise.resolve();
    return Array.from(document.querySelectorAll('[role="dialog"] button')).filter((b) => b.textContent === label).length;
  }, "Approve");
}

/** The `turn/cancel` goes before any answer on the connection it went on. */
function cancelBeforeAnswers(c: Chat): void {
  const messages = c.proxy.messages();
  const cancelAt = messages.findIndex((m) => m.direction === "toHost" && m.message["method"] === "turn/cancel");
  expect(cancelAt).toBeGreaterThanOrEqual(0);
  const connection = messages[cancelAt]?.connection;
  for (const answer of approvalAnswers(messages).filter((a) => a.connection === connection)) expect(answer.at).toBeGreaterThan(cancelAt);
}

/** Take the host out of reach: the socket is cut and new ones are refused; the turn shows reconnecting. */
async function goOffline(c: Chat): Promise<void> {
  c.proxy.refuse(true);
  c.proxy.cut();
  await c.page.waitForSelector('li[data-phase="reconnecting"]');
}

async function comeBack(c: Chat): Promise<void> {
  c.proxy.refuse(false);
  await retryNow(c.page);
}

/** The page shows the kept Stop and the question withdrawn, with no live buttons. */
async function showsKeptStop(page: Page): Promise<void> {
  await page.waitForSelector('li[data-phase="stopping"]');
  expect.soft(await page.textContent("p.phase")).toBe("Stop will be sent when back online");
  const dialog = page.locator('[role="dialog"]');
  expect.soft(await dialog.count(), "the question is shown").toBe(1);
  expect.soft(await dialog.allTextContents()).toEqual([expect.stringContaining("withdrawn: you stopped the turn")]);
  expect.soft(await page.locator('[role="dialog"] button').count()).toBe(0);
}

describe("a Stop is final in the React chat app (docs/examples/react-chat) in Chromium", () => {
  it("Stop while the question is open online: the question is answered cancelled, then the one turn/cancel; no button to approve; the tool never runs", async () => {
    const c = await asking();
    expect(await approveButtonsAfterStop(c.page)).toBe(0);
    await tryToApprove(c.page);
    await stopWasFinal(c);
    const messages = c.proxy.messages();
    const cancelAt = messages.findIndex((m) => m.direction === "toHost" && m.message["method"] === "turn/cancel");
    expect(approvalAnswers(messages).map((a) => [a.decision, a.at < cancelAt])).toEqual([["cancelled", true]]);
    expect(c.problems).toEqual([]);
  }, 60_000);

  it("Stop while the question is open and the socket is cut, then Approve: the page shows the kept Stop and no button; back online the tool never runs", async () => {
    const c = await asking();
    await goOffline(c);
    await c.page.click("button.stop");
    await showsKeptStop(c.page);
    expect.soft(await tryToApprove(c.page), "an Approve button was still there after the Stop").toBe(false);
    expect(c.host.cancelsLogged()).toHaveLength(0);
    await comeBack(c);
    await stopWasFinal(c);
    cancelBeforeAnswers(c);
  }, 60_000);

  it("Stop offline with the question open, then a reload while still offline: still withdrawn, no button; back online the tool never runs", async () => {
    const c = await asking();
    await goOffline(c);
    await c.page.click("button.stop");
    await c.page.waitForSelector('li[data-phase="stopping"]');
    await c.page.reload();
    await showsKeptStop(c.page);
    expect.soft(await tryToApprove(c.page), "an Approve button was shown after the reload").toBe(false);
    await comeBack(c);
    await stopWasFinal(c);
    cancelBeforeAnswers(c);
  }, 60_000);
});
