/**
 * docs/examples/react-chat/app.tsx (the guide's React app on @muse-code/sdk/react, under StrictMode)
 * in real Chromium with real React, against the real reference host over real sockets, through
 * each of its features: a turn streamed with its live tool output; Stop until the host's own
 * terminal (one cancel for a double Stop, or for a Stop pressed offline, which the page says will
 * be sent when back online); a reload mid-turn and while stopping, with the token kept out of the
 * address bar; a socket dropped from the network side; a host SIGKILLed and restarted; an
 * approval open across a drop and a reload; and the model chosen at the start and switched from
 * the <select>. Stop while a question is open: reactChatStop.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  APPROVE,
  HELLO,
  buildChat,
  openChat,
  phase,
  phases,
  retryNow,
  send,
  sentMethod,
  startBuild,
  type ChatBuild,
  type ChatOptions,
} from "./reactChatPage.js";

let chat: ChatBuild;
const cleanups: Array<() => unknown> = [];
const open = (options?: ChatOptions) => openChat(chat, cleanups, options);

beforeAll(async () => {
  chat = await buildChat();
}, 60_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await chat?.close();
});

describe("the React chat app (docs/examples/react-chat) in Chromium", () => {
  it("streams a turn: the message, then the tool's output line by line while it runs, then the host's terminal; the token leaves the address bar", async () => {
    const c = await open();
    expect(c.page.url()).not.toContain("token");
    await startBuild(c.page);
    expect(await c.page.textContent("p.message")).toBe("Building.");
    expect(await c.page.getAttribute("pre.tool", "data-status")).toBe("inProgress");
    const early = (await c.page.textContent("pre.tool")) ?? "";
    await c.page.waitForFunction(() => document.querySelector("pre.tool")?.textContent?.includes("step 12") === true, undefined, { timeout: 15_000 });
    expect(await phase(c.page)).toBe("running");
    expect(((await c.page.textContent("pre.tool")) ?? "").startsWith(early)).toBe(true);
    expect(await c.page.textContent("p.phase")).toBe("running");
    await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    expect(await c.page.textContent("p.phase")).toBe("completed");
    expect(await c.page.textContent("pre.tool")).toContain("built");
    expect(await c.page.getAttribute("pre.tool", "data-status")).toBe("completed");
    expect(c.problems).toEqual([]);
  }, 60_000);

  it("under StrictMode: one socket, one session/create; a double Stop is one turn/cancel, and the turn ends with the host's terminal", async () => {
    const c = await open();
    expect(c.sockets()).toBe(1);
    expect(sentMethod(c, "session/create")).toHaveLength(1);
    await startBuild(c.page);
    await c.page.dblclick("button.stop");
    await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 15_000 });
    expect(await c.page.textContent("p.phase")).toBe("you stopped it");
    expect(await phases(c.page)).toEqual(["starting", "running", "stopping", "ended"]);
    expect(await c.page.locator("button.stop").count()).toBe(0);
    expect(sentMethod(c, "turn/cancel")).toHaveLength(1);
    expect(c.host.cancelsLogged()).toHaveLength(1);
    expect(c.problems).toEqual([]);
  }, 60_000);

  it("the socket dropped from the network side: the turn shows reconnecting, never failed, then its real state and terminal", async () => {
    const c = await open();
    await startBuild(c.page);
    c.proxy.cut();
    await c.page.waitForSelector('li[data-phase="reconnecting"]');
    expect(await c.page.getAttribute('[role="status"]', "data-state")).toBe("reconnecting");
    expect(await c.page.textContent("p.phase")).toBe("reconnecting: the turn may still be running");
    await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    expect(await c.page.textContent("p.phase")).toBe("completed");
    const seen = await phases(c.page);
    expect(seen).toContain("reconnecting");
    expect(seen.every((p) => ["starting", "running", "reconnecting", "ended"].includes(p))).toBe(true);
    expect(c.sockets()).toBe(2);
  }, 60_000);

  it("Stop pressed while disconnected: the page says it will be sent when back online; exactly one cancel in the host's log after the reconnect, the real terminal", async () => {
    const c = await open();
    await startBuild(c.page);
    c.proxy.refuse(true);
    c.proxy.cut();
    await c.page.waitForSelector('li[data-phase="reconnecting"]');
    await c.page.dblclick("button.stop");
    // The Stop is kept for the reconnect before the page re-renders: wait for that render, bounded.
    await c.page.waitForSelector('li[data-phase="stopping"]', { timeout: 5_000 });
    expect(await c.page.textContent("p.phase")).toBe("Stop will be sent when back online");
    expect(c.host.cancelsLogged()).toHaveLength(0);
    c.proxy.refuse(false);
    await retryNow(c.page);
    await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    expect(await c.page.textContent("p.phase")).toBe("you stopped it");
    expect(c.host.cancelsLogged()).toHaveLength(1);
  }, 60_000);

  it("a reload mid-turn resumes the turn with the kept token; a reload while stopping (pressed offline) still shows stopping until the real terminal, one cancel", async () => {
    const c = await open();
    await startBuild(c.page);
    await c.page.reload(); // the address has no token now: the page reads the kept one
    await c.page.waitForSelector('[role="status"][data-state="open"]');
    await c.page.waitForFunction(() => document.querySelector("pre.tool")?.textContent?.includes("step 10") === true, undefined, { timeout: 15_000 });
    // Stop pressed with the host out of reach, then a reload: the page shows the kept Stop, then the terminal once back.
    c.proxy.refuse(true);
    c.proxy.cut();
    await c.page.waitForSelector('li[data-phase="reconnecting"]');
    await c.page.click("button.stop");
    await c.page.waitForSelector('li[data-phase="stopping"]');
    await c.page.reload();
    await c.page.waitForSelector('li[data-phase="stopping"]');
    expect(await c.page.textContent("p.phase")).toBe("Stop will be sent when back online");
    c.proxy.refuse(false);
    await retryNow(c.page);
    await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    // This page load showed the turn stopping until the host's terminal, nothing else.
    expect(await phases(c.page)).toEqual(["stopping", "ended"]);
    expect(await c.page.textContent("p.phase")).toBe("you stopped it");
    expect(c.host.cancelsLogged()).toHaveLength(1);
    expect(await c.page.locator("li[data-turn]").count()).toBe(1);
    expect(c.page.url()).not.toContain("token");
  }, 60_000);

  it("the host SIGKILLed and restarted on the same data, port and token file: reconnecting, then straight to the host's 'host restarted' terminal", async () => {
    const c = await open();
    await startBuild(c.page);
    await c.host.crash();
    await c.page.waitForSelector('li[data-phase="reconnecting"]');
    await c.host.restart();
    await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 30_000 });
    expect(await c.page.textContent("p.phase")).toBe("the host restarted");
    const seen = await phases(c.page);
    expect(seen.slice(seen.indexOf("reconnecting"))).toEqual(["reconnecting", "ended"]);
  }, 60_000);

  it("an approval open across a drop and a reload is shown once, answered after the reconnect, and the tool runs", async () => {
    const c = await open({ model: APPROVE });
    await send(c.page, "publish");
    await c.page.waitForSelector('[role="dialog"] button:text("Approve")');
    c.proxy.cut();
    await c.page.waitForSelector('li[data-phase="reconnecting"]');
    expect(await c.page.locator('[role="dialog"]').count()).toBe(1);
    await c.page.waitForSelector('li[data-phase="running"]', { timeout: 20_000 });
    expect(await c.page.locator('[role="dialog"]').count()).toBe(1);
    await c.page.reload();
    await c.page.waitForSelector("li[data-turn]");
    expect(await c.page.locator('[role="dialog"]').count()).toBe(1);
    await c.page.click('[role="dialog"] button:text("Approve")', { timeout: 20_000 });
    await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    expect(await c.page.textContent("p.phase")).toBe("completed");
    expect(await c.page.textContent("pre.tool")).toContain("published");
    expect(await c.page.locator('[role="dialog"]').count()).toBe(0);
  }, 60_000);

  it("choosing a model: ?model= starts the session on it, the <select> lists the host's models and switches the next turn", async () => {
    const c = await open({ model: APPROVE, hostArgs: ["--model", `hello=${HELLO}`], search: "?model=hello" });
    const created = c.proxy.messages().filter((m) => m.direction === "toHost" && m.message["method"] === "session/create");
    expect(created.map((m) => (m.message["params"] as { model?: string }).model)).toEqual(["hello"]);
    expect(await c.page.locator("select option").allTextContents()).toEqual(["default", "hello"]);
    expect(await c.page.inputValue("select")).toBe("hello");
    await send(c.page, "hi");
    await c.page.waitForSelector('li[data-phase="ended"]', { timeout: 20_000 });
    expect(await c.page.textContent("p.message")).toBe("Hello there, friend!");
    await c.page.selectOption("select", "default");
    await c.page.waitForFunction(() => document.querySelector("select")?.value === "default");
    await expect
      .poll(
        () =>
          c.host
            .logRecords()
            .filter((r) => r["type"] === "model")
            .map((r) => r["model"]),
        { timeout: 10_000 },
      )
      .toEqual(["default"]);
    await send(c.page, "publish");
    await c.page.waitForSelector('li:nth-of-type(2) [role="dialog"]', { timeout: 20_000 });
    expect(await c.page.textContent("li:nth-of-type(2) p.message")).toBe("Publishing the package.");
    expect(sentMethod(c, "session/setModel")).toHaveLength(1);
    expect(c.problems).toEqual([]);
  }, 60_000);
});
