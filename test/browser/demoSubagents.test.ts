/**
 * The Stop-button app with subagents (issue 23), in headless Chromium against the real reference
 * host over a real socket, with real shell tools:
 * - the demo's subagent model (models/demo-subagents.json): the child turns render nested under
 *   the tool calls that delegated them (a grandchild under its parent's call), each with its own
 *   state and its own streamed output, the top-level turn counting them; the docs subagent's
 *   question opens the dialog saying which subagent asks; approved, every turn completes;
 * - a tree whose tools run until stopped (test/fixtures/models/subagents-tree.json): Stop counts
 *   the subagents down ("stopping 3 of 3 subagents…") until the top-level turn's own terminal,
 *   which shows only after every subagent showed "stopped because its parent turn stopped";
 * - the same tree, the page reloaded while it runs: the session layer kept the tree and each child
 *   session's cursor, the resume sends them (`childCursors`) and the host replays the tree, so the
 *   page shows every subagent again, running, nested as before; then one Stop stops it all and
 *   every subagent shows "stopped because its parent turn stopped";
 * - a subagent that asks (test/fixtures/models/subagents-approval.json): the dialog names it, and
 *   Approve runs its tool; Stop with its question open withdraws it, and the tool never runs.
 * What the page shows is checked against the host's own session logs (the page's session and each
 * child session's), worded as the app words a terminal (`describeEnding`).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { describeTreeProgress } from "../../src/ui/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { buildDemoPage, pageWords, startDemoHost, type DemoHost } from "./demoHost.js";
import { chromiumLaunchOptions } from "./provisionChromium.js";

/** The demo's tree: two subagents, one of which delegates to a grandchild; the docs subagent asks before it publishes. */
const DEMO_TREE = join(repoRoot, "packages/host/models/demo-subagents.json");
/** Two subagents and a grandchild, every turn's shell tool sleeping until it is stopped. */
const STOPPABLE_TREE = join(repoRoot, "test/fixtures/models/subagents-tree.json");
/** One subagent that asks before it touches `$MUSE_MARKER`. */
const ASKING_CHILD = join(repoRoot, "test/fixtures/models/subagents-approval.json");
/** Waits on real processes on two loaded cores. @unit milliseconds */
const WAIT_MS = 45_000;

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

interface Demo {
  host: DemoHost;
  page: Page;
  sent: Record<string, unknown>[];
  received: Record<string, unknown>[];
  problems: string[];
}

async function openDemo(model: string, env?: Record<string, string>): Promise<Demo> {
  const host = await startDemoHost(ui.dir, { model, ...(env === undefined ? {} : { env }) });
  cleanups.push(() => host.stop());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
  cleanups.push(() => page.close());
  const sent: Record<string, unknown>[] = [];
  const received: Record<string, unknown>[] = [];
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console.error: ${message.text()}`);
  });
  page.on("websocket", (socket) => {
    socket.on("framesent", ({ payload }) => sent.push(JSON.parse(String(payload)) as Record<string, unknown>));
    socket.on("framereceived", ({ payload }) => received.push(JSON.parse(String(payload)) as Record<string, unknown>));
  });
  await page.goto(host.pageUrl);
  await page.waitForSelector("#start:not([disabled])");
  return { host, page, sent, received, problems };
}

/** One child turn as the host's logs tell it: its session, parent, depth, terminal, and what its delegating call asked. */
interface LoggedChild {
  sessionId: string;
  turnId: string;
  parent: { sessionId: string; turnId: string; itemId: string };
  depth: number;
  agent: string;
  prompt: string;
  terminal: Record<string, unknown> | undefined;
}

/** The host's view of the tree: the top-level turn's terminal and every child turn, from every session log. */
function loggedTree(host: DemoHost): { top: { turnId: string; terminal: Record<string, unknown> | undefined }; children: LoggedChild[] } {
  const logs = host.sessionLogs();
  const notifications = (log: Record<string, unknown>[]) =>
    log.filter((r) => r["type"] === "notification").map((r) => ({ method: r["method"] as string, params: r["params"] as Record<string, unknown> }));
  const terminalOf = (turnId: string) =>
    logs.flat().find((r) => r["type"] === "turnCompleted" && r["turnId"] === turnId) as Record<string, unknown> | undefined;
  // Every delegating call, by the child turn it started: its args say which agent and what prompt.
  const calls = new Map<string, { agent: string; prompt: string }>();
  for (const { method, params } of logs.flatMap(notifications)) {
    const item = params["item"] as Record<string, unknown> | undefined;
    const link = item?.["subagent"] as { turnId: string } | undefined;
    if (method !== "item/updated" || link === undefined) continue;
    const started = logs
      .flatMap(notifications)
      .find((n) => n.method === "item/started" && (n.params["item"] as Record<string, unknown>)["itemId"] === item?.["itemId"]);
    const args = JSON.parse(String((started?.params["item"] as Record<string, unknown>)["args"])) as { agent: string; prompt: string };
    calls.set(link.turnId, args);
  }
  const children: LoggedChild[] = [];
  let top: { turnId: string; terminal: Record<string, unknown> | undefined } | undefined;
  for (const log of logs) {
    const sessionId = (log.find((r) => r["type"] === "session") as Record<string, unknown>)["sessionId"] as string;
    for (const { method, params } of notifications(log)) {
      if (method !== "turn/started") continue;
      const turnId = params["turnId"] as string;
      const parent = params["parent"] as LoggedChild["parent"] | undefined;
      if (parent === undefined) {
        top = { turnId, terminal: terminalOf(turnId) };
        continue;
      }
      const call = calls.get(turnId);
      expect(call, `the delegating call of child turn ${turnId}`).toBeDefined();
      children.push({
        sessionId,
        turnId,
        parent,
        depth: params["depth"] as number,
        ...(call as { agent: string; prompt: string }),
        terminal: terminalOf(turnId),
      });
    }
  }
  expect(top, "the top-level turn").toBeDefined();
  return { top: top as NonNullable<typeof top>, children };
}

/** Each subagent entry the page shows: its turn, agent, depth, state and words, and where it sits. */
interface ShownChild {
  turnId: string;
  agent: string;
  depth: string;
  state: string;
  words: string;
  title: string;
  /** The delegating call's item it is nested in. */
  callItemId: string;
  /** The subagent entry it is nested in (its parent subagent's turn), or "" for a child of the top-level turn. */
  parentTurnId: string;
  /** The top-level turn's element it is in. */
  topTurnId: string;
  listLabel: string;
  /** Its own tool calls' output, as shown. */
  output: string;
}

const shownChildren = (page: Page): Promise<ShownChild[]> =>
  page.$$eval("li.subagent", (entries) =>
    entries.map((li) => {
      const el = li as HTMLElement;
      const list = el.parentElement as HTMLElement;
      const call = list.closest("[data-item-id]") as HTMLElement | null;
      const above = list.parentElement?.closest("li.subagent") as HTMLElement | null;
      const own = Array.from(el.querySelectorAll(":scope > .items > .tool > .tool-output")).map((node) => node.textContent ?? "");
      return {
        turnId: el.dataset["turnId"] ?? "",
        agent: el.dataset["agent"] ?? "",
        depth: el.dataset["depth"] ?? "",
        state: el.dataset["state"] ?? "",
        words: el.querySelector(":scope > .subagent-state")?.textContent ?? "",
        title: el.querySelector(":scope > .subagent-title")?.textContent ?? "",
        callItemId: call?.dataset["itemId"] ?? "",
        parentTurnId: above?.dataset["turnId"] ?? "",
        topTurnId: (el.closest("li.turn") as HTMLElement | null)?.dataset["turnId"] ?? "",
        listLabel: list.getAttribute("aria-label") ?? "",
        output: own.join("\n"),
      };
    }),
  );

/** Wait until the page shows `count` subagents, each running with some output of its own tool. */
const waitForRunningTree = (page: Page, count: number) =>
  page.waitForFunction(
    (n) => {
      const entries = Array.from(document.querySelectorAll<HTMLElement>("li.subagent"));
      return (
        entries.length === n &&
        entries.every(
          (li) =>
            li.dataset["state"] === "running" &&
            Array.from(li.querySelectorAll(":scope > .items > .tool > .tool-output")).some((output) => (output.textContent ?? "") !== ""),
        )
      );
    },
    count,
    { timeout: WAIT_MS },
  );

const waitForEnded = (page: Page) => page.waitForSelector('.turn:last-child[data-phase="ended"]', { timeout: WAIT_MS });
const topOutcome = (page: Page) => page.textContent(".turn:last-child > .outcome");

/** What the page showed at one change: the Stop button, the top-level turn's last line, each subagent's state. */
interface Seen {
  /** The status line (aria-live). */
  status: string;
  stop: string;
  outcome: string;
  children: string[];
}

/** Record, at every change of the page from now on, what the Stop button, the top-level turn and each subagent say. */
const recordChanges = (page: Page) =>
  page.evaluate(() => {
    const seen: Seen[] = [];
    (window as unknown as { seen: Seen[] }).seen = seen;
    const record = () =>
      seen.push({
        status: document.getElementById("status")?.textContent ?? "",
        stop: document.getElementById("stop")?.textContent ?? "",
        outcome: document.querySelector(".turn:last-child > .outcome")?.textContent ?? "",
        children: Array.from(document.querySelectorAll<HTMLElement>("li.subagent")).map((li) => li.dataset["state"] ?? ""),
      });
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
const recorded = (page: Page) => page.evaluate(() => (window as unknown as { seen: Seen[] }).seen);

/** Every shown child sits where the host's links put it: under its delegating call, in its parent's entry, at its depth, named by its agent. */
function expectNestedAsLogged(shown: ShownChild[], logged: ReturnType<typeof loggedTree>): void {
  expect(shown.map((c) => c.turnId).sort()).toEqual(logged.children.map((c) => c.turnId).sort());
  for (const child of logged.children) {
    const entry = shown.find((c) => c.turnId === child.turnId) as ShownChild;
    const parentIsTop = child.parent.turnId === logged.top.turnId;
    expect(entry).toMatchObject({
      agent: child.agent,
      depth: String(child.depth),
      callItemId: child.parent.itemId,
      parentTurnId: parentIsTop ? "" : child.parent.turnId,
      topTurnId: logged.top.turnId,
      listLabel: `subagent ${child.agent}`,
      title: `Subagent ${child.agent}: “${child.prompt}”`,
    });
  }
}

describe("the app shows a subagent tree nested under its delegating calls", { timeout: 120_000 }, () => {
  it("the demo's tree: nested and running with their own output, the docs subagent's question names it, then every turn completed", async () => {
    const { host, page, received, problems } = await openDemo(DEMO_TREE);
    await page.fill("#prompt", "Prepare the release");
    await recordChanges(page);
    await page.click("#start");

    // Running: three subagents, each streaming its own tool's output, nested as the host linked them.
    await waitForRunningTree(page, 3);
    const running = await shownChildren(page);
    expectNestedAsLogged(running, loggedTree(host));
    expect(new Set(running.map((c) => c.output)).size).toBe(3); // each shows its own output, not another's
    expect(running.every((c) => c.words === "running")).toBe(true);
    expect(await page.getAttribute(".turn:last-child", "data-phase")).toBe("running");
    const started = running.length;

    // The docs subagent asks before it publishes: the dialog says which subagent asks, for which turn.
    await page.waitForSelector("#approval[open]", { timeout: WAIT_MS });
    const asked = received.filter((m) => m["method"] === "tool/approve").map((m) => m["params"] as Record<string, unknown>);
    expect(asked).toHaveLength(1);
    const tree = loggedTree(host);
    const asker = tree.children.find((c) => c.turnId === asked[0]?.["turnId"]) as LoggedChild;
    expect(asker).toBeDefined();
    expect(asked[0]?.["sessionId"]).toBe(asker.sessionId);
    expect(await page.getAttribute("#approval", "data-asker")).toBe("subagent");
    expect(await page.textContent("#approval-asker")).toBe(`subagent “${asker.agent}” (asked to “${asker.prompt}”)`);
    expect(await page.textContent("#approval-turn")).toBe("Prepare the release");
    expect(await page.textContent("#approval-command")).toBe(JSON.parse(String(asked[0]?.["args"]))["command"]);
    expect(await page.textContent(`li.subagent[data-turn-id="${asker.turnId}"] > .items > .tool[data-approval="pending"] .item-status`)).toBe(
      "waiting for your approval…",
    );
    await page.click("#approval-approve");
    await page.waitForSelector("#approval:not([open])", { state: "attached", timeout: WAIT_MS });

    // Every turn of the tree completed, each as the host logged it; the top-level turn's terminal last.
    await waitForEnded(page);
    const logged = loggedTree(host);
    const ended = await shownChildren(page);
    expectNestedAsLogged(ended, logged);
    expect(ended).toHaveLength(started);
    for (const child of logged.children) {
      expect(child.terminal).toMatchObject({ terminal: "completed" });
      expect(ended.find((c) => c.turnId === child.turnId)).toMatchObject({ state: "completed", words: pageWords(child.terminal as Record<string, unknown>) });
    }
    expect(logged.top.terminal).toMatchObject({ terminal: "completed" });
    expect(await topOutcome(page)).toBe(pageWords(logged.top.terminal as Record<string, unknown>));
    // From the Start on, a subagent was only ever starting, running or completed, as the stream said.
    const states = new Set((await recorded(page)).flatMap((s) => s.children));
    expect([...states].filter((state) => !["starting", "running", "completed"].includes(state))).toEqual([]);
    expect(states).toContain("running");
    // Every link and child notification was read (the page says so on the status line when one is not).
    expect((await recorded(page)).filter((s) => s.status.startsWith("Could not"))).toEqual([]);
    // The answer the page sent went to the subagent's question, approved.
    const answers = host
      .sessionLogs()
      .flat()
      .filter((r) => r["type"] === "approval");
    expect(answers.map((r) => [r["turnId"], r["state"]])).toEqual([
      [asker.turnId, "pending"],
      [asker.turnId, "approved"],
    ]);
    expect(problems).toEqual([]);
  });
});

describe("one Stop stops the tree", { timeout: 120_000 }, () => {
  it("Stop counts the subagents down until the top-level turn's own terminal; every subagent ends 'stopped because its parent turn stopped'", async () => {
    const { host, page, sent, problems } = await openDemo(STOPPABLE_TREE);
    await page.fill("#prompt", "Split the work");
    await recordChanges(page);
    await page.click("#start");
    await waitForRunningTree(page, 3);
    const before = loggedTree(host);
    const started = before.children.length;
    expect(await topOutcome(page)).toBe(`running: ${describeTreeProgress({ started, ended: 0, running: started })}`);

    const from = (await recorded(page)).length;
    await page.click("#stop");
    await waitForEnded(page);

    const logged = loggedTree(host);
    const topWords = pageWords(logged.top.terminal as Record<string, unknown>);
    expect(logged.top.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    // One turn/cancel, naming the top-level turn: the host stopped the rest.
    const cancels = sent.filter((m) => m["method"] === "turn/cancel").map((m) => (m["params"] as Record<string, unknown>)["turnId"]);
    expect(cancels).toEqual([logged.top.turnId]);

    const all = await recorded(page);
    expect(all.filter((s) => s.status.startsWith("Could not"))).toEqual([]);
    // The status line counted the subagents down too, in the same words.
    expect(all.map((s) => s.status)).toContain(describeTreeProgress({ started, ended: 0, running: started }, { stopping: true }));
    // A subagent was only ever starting, running or cancelled, as the stream said.
    expect([...new Set(all.flatMap((s) => s.children))].filter((state) => !["starting", "running", "cancelled"].includes(state))).toEqual([]);
    const seen = all.slice(from);
    const stopping = describeTreeProgress({ started, ended: 0, running: started }, { stopping: true });
    expect(seen.map((s) => s.stop)).toContain(stopping);
    // Until the top-level turn's own terminal, the page counts the subagents down (or says Stopping… once they all ended), never a terminal.
    const first = seen.findIndex((s) => s.outcome === topWords);
    expect(first).toBeGreaterThan(0);
    const counts: number[] = [];
    for (const s of seen.slice(0, first)) {
      if (s.stop === "Stop") continue; // before the click
      const count = /^stopping (\d+) of (\d+) subagents…$/.exec(s.stop);
      if (count === null) expect(s.stop).toBe("Stopping…");
      else {
        expect(Number(count[2])).toBe(started);
        counts.push(Number(count[1]));
      }
      expect(s.outcome).toBe(s.stop); // the turn's last line says the same
    }
    expect(counts[0]).toBe(started);
    expect(counts).toEqual([...counts].sort((a, b) => b - a)); // it only counts down
    // The top-level terminal showed only once every subagent showed its own.
    expect(seen[first]?.children.every((state) => state === "cancelled")).toBe(true);
    expect(seen.slice(first).every((s) => s.outcome === topWords)).toBe(true);

    const shown = await shownChildren(page);
    expectNestedAsLogged(shown, logged);
    for (const child of logged.children) {
      expect(child.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
      const words = pageWords(child.terminal as Record<string, unknown>);
      expect(words).toMatch(/^stopped because its parent turn stopped/);
      expect(shown.find((c) => c.turnId === child.turnId)).toMatchObject({ state: "cancelled", words });
    }
    expect(await page.textContent("#stop")).toBe("Stop");
    expect(await page.isDisabled("#stop")).toBe(true);
    expect(problems).toEqual([]);
  });
});

describe("a reload while the tree runs shows the tree again", { timeout: 120_000 }, () => {
  it("after the reload every subagent shows, running and nested as the host linked it; one Stop then stops it all, each 'stopped because its parent turn stopped'", async () => {
    const { host, page, sent, problems } = await openDemo(STOPPABLE_TREE);
    await page.fill("#prompt", "Split the work");
    await page.click("#start");
    await waitForRunningTree(page, 3);
    const before = loggedTree(host);
    expect(before.children.every((child) => child.terminal === undefined)).toBe(true);
    const resumesBefore = sent.filter((m) => m["method"] === "session/resume").length;
    // The session writes to the tab's storage a moment after what it heard (batched): wait until it holds every child turn and a cursor of each child session.
    const childSessions = [...new Set(before.children.map((c) => c.sessionId))].sort();
    const kept = await page.waitForFunction(
      ({ turns, sessions }) => {
        const text = sessionStorage.getItem("muse-demo:session");
        if (text === null) return undefined;
        const value = JSON.parse(text) as { childCursors?: Record<string, string>; tree?: Array<{ turnId: string }> };
        const cursors = value.childCursors ?? {};
        const keptTurns = (value.tree ?? []).map((turn) => turn.turnId);
        return sessions.every((id) => typeof cursors[id] === "string") && turns.every((id) => keptTurns.includes(id)) ? cursors : undefined;
      },
      { turns: before.children.map((c) => c.turnId), sessions: childSessions },
      { timeout: WAIT_MS },
    );
    const keptCursors = (await kept.jsonValue()) as Record<string, string>;

    await page.reload();
    await page.waitForSelector("#start:not([disabled])");
    await recordChanges(page);
    // Every subagent shows again, running, where the host linked it: from the kept tree and the host's replay.
    await page.waitForFunction(
      (n) => {
        const entries = Array.from(document.querySelectorAll<HTMLElement>("li.subagent"));
        return entries.length === n && entries.every((li) => li.dataset["state"] === "running");
      },
      before.children.length,
      { timeout: WAIT_MS },
    );
    const resumed = await shownChildren(page);
    expectNestedAsLogged(resumed, loggedTree(host));
    expect(resumed.every((c) => c.words === "running")).toBe(true);
    // Each still shows its own running tool's output (the resume's items in progress: the snapshot holds none of a child's).
    expect(resumed.every((c) => c.output.trim().startsWith("started "))).toBe(true);
    expect(new Set(resumed.map((c) => c.output)).size).toBe(resumed.length);
    expect(await page.getAttribute(".turn:last-child", "data-phase")).toBe("running");
    const started = before.children.length;
    expect(await topOutcome(page)).toBe(`running: ${describeTreeProgress({ started, ended: 0, running: started })}`);
    // The resume named each child session with the cursor the tab kept of it.
    const resumes = sent.filter((m) => m["method"] === "session/resume").slice(resumesBefore);
    expect(resumes).toHaveLength(1);
    const childCursors = (resumes[0]?.["params"] as { childCursors?: Record<string, unknown> }).childCursors ?? {};
    expect(Object.keys(childCursors).sort()).toEqual(childSessions);
    expect(childCursors).toEqual(keptCursors);

    await page.click("#stop");
    await waitForEnded(page);
    const logged = loggedTree(host);
    expect(logged.top.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    const cancels = sent.filter((m) => m["method"] === "turn/cancel").map((m) => (m["params"] as Record<string, unknown>)["turnId"]);
    expect(cancels).toEqual([logged.top.turnId]);
    const shown = await shownChildren(page);
    expectNestedAsLogged(shown, logged);
    for (const child of logged.children) {
      expect(child.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
      const words = pageWords(child.terminal as Record<string, unknown>);
      expect(words).toMatch(/^stopped because its parent turn stopped/);
      expect(shown.find((c) => c.turnId === child.turnId)).toMatchObject({ state: "cancelled", words });
    }
    expect(await topOutcome(page)).toBe(pageWords(logged.top.terminal as Record<string, unknown>));
    // From the reload on, a subagent was only ever running or cancelled, as the host said; never one the page lost.
    const all = await recorded(page);
    expect([...new Set(all.flatMap((s) => s.children))].filter((state) => !["running", "cancelled"].includes(state))).toEqual([]);
    expect(all.filter((s) => s.status.startsWith("Could not"))).toEqual([]);
    // The top-level terminal showed only once every subagent showed its own.
    const first = all.findIndex((s) => s.outcome === pageWords(logged.top.terminal as Record<string, unknown>));
    expect(first).toBeGreaterThan(0);
    expect(all[first]?.children.every((state) => state === "cancelled")).toBe(true);
    expect(problems).toEqual([]);
  });
});

describe("a subagent's question opens the approval dialog, saying which subagent asks", { timeout: 120_000 }, () => {
  const fixture = JSON.parse(readFileSync(ASKING_CHILD, "utf8")) as { agents: Record<string, unknown> };
  let marker: string;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "muse-demo-subagent-marker-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function askingDemo(name: string): Promise<Demo & { asker: LoggedChild }> {
    marker = join(dir, `${name}.marker`);
    const demo = await openDemo(ASKING_CHILD, { MUSE_MARKER: marker });
    await demo.page.fill("#prompt", "Tidy up");
    await demo.page.click("#start");
    await demo.page.waitForSelector("#approval[open]", { timeout: WAIT_MS });
    const [child, ...more] = loggedTree(demo.host).children;
    expect(more).toEqual([]);
    expect(Object.keys(fixture.agents)).toContain(child?.agent);
    return { ...demo, asker: child as LoggedChild };
  }

  it("Approve: the dialog names the subagent and what it was asked; its tool runs and the tree completes", async () => {
    const { host, page, received, sent, problems, asker } = await askingDemo("approve");
    const [question, ...more] = received.filter((m) => m["method"] === "tool/approve");
    expect(more).toEqual([]);
    expect(question?.["params"]).toMatchObject({ sessionId: asker.sessionId, turnId: asker.turnId });
    expect(await page.textContent("#approval-asker")).toBe(`subagent “${asker.agent}” (asked to “${asker.prompt}”)`);
    expect(await page.textContent("#approval-turn")).toBe("Tidy up");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("approval-deny");
    expect(await page.textContent("#status")).toContain(`Approval needed by the subagent “${asker.agent}”`);
    expect(existsSync(marker)).toBe(false);

    await page.click("#approval-approve");
    await waitForEnded(page);
    expect(existsSync(marker)).toBe(true);
    const answer = sent.find((m) => m["id"] === question?.["id"] && m["method"] === undefined);
    expect(answer?.["result"]).toEqual({ decision: "approve" });
    const logged = loggedTree(host);
    const [child] = await shownChildren(page);
    expect(child).toMatchObject({ turnId: asker.turnId, state: "completed", words: pageWords(logged.children[0]?.terminal as Record<string, unknown>) });
    expect(await page.getAttribute(`li.subagent > .items > .tool`, "data-approval")).toBe("approved");
    expect(await topOutcome(page)).toBe(pageWords(logged.top.terminal as Record<string, unknown>));
    expect(logged.top.terminal).toMatchObject({ terminal: "completed" });
    expect(problems).toEqual([]);
  });

  it("Stop with the subagent's question open: the question is withdrawn, the dialog closes, the tool never runs, the tree ends cancelled", async () => {
    const { host, page, sent, problems, asker } = await askingDemo("stop");
    await page.click("#stop");
    await page.waitForSelector("#approval:not([open])", { state: "attached", timeout: WAIT_MS });
    await waitForEnded(page);
    const logged = loggedTree(host);
    expect(logged.top.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect(logged.children[0]?.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
    const [child] = await shownChildren(page);
    expect(child).toMatchObject({ turnId: asker.turnId, state: "cancelled", words: pageWords(logged.children[0]?.terminal as Record<string, unknown>) });
    expect(await page.getAttribute("li.subagent > .items > .tool", "data-approval")).toBe("cancelled");
    expect(await topOutcome(page)).toBe(pageWords(logged.top.terminal as Record<string, unknown>));
    // The page sent one cancel and never approved; the host withdrew the question and the tool never ran.
    expect(sent.filter((m) => m["method"] === "turn/cancel")).toHaveLength(1);
    expect(sent.some((m) => (m["result"] as Record<string, unknown> | undefined)?.["decision"] === "approve")).toBe(false);
    const approvals = host
      .sessionLogs()
      .flat()
      .filter((r) => r["type"] === "approval")
      .map((r) => r["state"]);
    expect(approvals).toEqual(["pending", "cancelled"]);
    expect(existsSync(marker)).toBe(false);
    expect(problems).toEqual([]);
  });
});
