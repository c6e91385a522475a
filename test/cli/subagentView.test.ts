/**
 * The text view of a subagent tree (issue 23), fed by ShownTree as `muse run` feeds it: two
 * children of one turn stream at once, and every line either one starts (its own, or one resumed
 * after the other cut it) begins with its indent and name; a stop counts the children still
 * running; a child's terminal is in describeEnding's words under its name; a delegating call whose
 * child was shown prints its status, not its output again.
 */
import { describe, expect, it } from "vitest";
import { foldItem, type Item, type MspNotification } from "../../src/index.js";
import { Screen } from "../../packages/host/src/cli/screen.js";
import { TextView } from "../../packages/host/src/cli/textView.js";
import { ShownTree } from "../../packages/host/src/cli/shownTree.js";
import { styles } from "../../packages/host/src/cli/style.js";

const at = "2025-08-07T18:50:00.000Z";
const cursors = new Map<string, number>();
const note = (sessionId: string, method: string, params: Record<string, unknown>): MspNotification => {
  const n = (cursors.get(sessionId) ?? 0) + 1;
  cursors.set(sessionId, n);
  return { method, params: { sessionId, viewCursor: `v:${sessionId}:${n}`, ...params } };
};
const task = (itemId: string, agent: string, prompt: string) =>
  ({
    itemId,
    kind: "toolCall",
    turnId: "t1",
    revision: 1,
    status: "inProgress",
    recordedAt: at,
    tool: "task",
    callId: `call_${itemId}`,
    args: JSON.stringify({ prompt, agent }),
    visibleOutput: "",
    truncated: false,
  }) as const;
const message = (sessionId: string, turnId: string, itemId: string) =>
  note(sessionId, "item/started", { item: { itemId, kind: "message", turnId, revision: 1, status: "inProgress", recordedAt: at, text: "" } });
const delta = (sessionId: string, turnId: string, itemId: string, revision: number, append: string) =>
  note(sessionId, "item/delta", { turnId, itemId, revision, field: "text", append, recordedAt: at });

/** A text view and a ShownTree fed as muse's commands feed them, with a client-like fold. */
function viewed(): { text: () => string; show: (n: MspNotification) => void; view: TextView } {
  const writes: string[] = [];
  const tree = new ShownTree();
  const view = new TextView(new Screen({ write: (text: string) => writes.push(text) }, { progress: false }), styles(false), { showTurnIds: false, tree });
  const held = new Map<string, Item>();
  const show = (n: MspNotification) => {
    const params = n.params as Record<string, unknown>;
    const itemId = n.method === "item/delta" ? String(params["itemId"]) : (params["item"] as Item | undefined)?.itemId;
    let item: Item | undefined;
    if (itemId !== undefined) {
      const next = foldItem(held.get(itemId), n.method, params);
      if (typeof next === "object") held.set(itemId, (item = next));
    }
    tree.observe(n, item);
    view.notification(n, item);
  };
  return { text: () => writes.join(""), show, view };
}

/** A turn t1 delegating to alpha (turn t2, session s2) and beta (turn t3, session s3), both started. */
function twoChildren(show: (n: MspNotification) => void): void {
  show(note("s1", "turn/started", { turnId: "t1" }));
  show(note("s1", "item/started", { item: task("c1", "alpha", "one") }));
  show(note("s1", "item/started", { item: task("c2", "beta", "two") }));
  show(
    note("s1", "item/updated", {
      item: { itemId: "c1", turnId: "t1", kind: "toolCall", revision: 2, recordedAt: at, subagent: { sessionId: "s2", turnId: "t2" } },
    }),
  );
  show(note("s2", "turn/started", { turnId: "t2", parent: { sessionId: "s1", turnId: "t1", itemId: "c1" }, depth: 1 }));
  show(
    note("s1", "item/updated", {
      item: { itemId: "c2", turnId: "t1", kind: "toolCall", revision: 2, recordedAt: at, subagent: { sessionId: "s3", turnId: "t3" } },
    }),
  );
  show(note("s3", "turn/started", { turnId: "t3", parent: { sessionId: "s1", turnId: "t1", itemId: "c2" }, depth: 1 }));
}

describe("TextView with subagents", () => {
  it("two children streaming at once: every line each starts, or resumes after the other cut it, begins with its indent and name", () => {
    const { text, show } = viewed();
    twoChildren(show);
    show(message("s2", "t2", "m2"));
    show(message("s3", "t3", "m3"));
    show(delta("s2", "t2", "m2", 2, "Hel"));
    show(delta("s3", "t3", "m3", 2, "Wor"));
    show(delta("s2", "t2", "m2", 3, "lo\nthere"));
    show(delta("s3", "t3", "m3", 3, "ld"));
    expect(text().split("\n")).toEqual([
      '> task: {"prompt":"one","agent":"alpha"}',
      '> task: {"prompt":"two","agent":"beta"}',
      "  [alpha] started: one",
      "  [beta] started: two",
      "  [alpha] Hel",
      "  [beta] Wor",
      "  [alpha] lo",
      "  [alpha] there",
      "  [beta] ld",
    ]);
  });

  it("a stop counts the running children; each child's terminal is under its name; the delegating call shows its status only", () => {
    const { text, show, view } = viewed();
    twoChildren(show);
    view.stopping("t1");
    show(
      note("s2", "turn/completed", { turnId: "t2", terminal: "cancelled", reason: "cancelled at step boundary", cause: { kind: "parent" }, durationMs: 1200 }),
    );
    show(
      note("s1", "item/completed", {
        item: {
          ...task("c1", "alpha", "one"),
          revision: 3,
          status: "cancelled",
          subagent: { sessionId: "s2", turnId: "t2" },
          visibleOutput: "half done",
          failureReason: "subagent cancelled by its parent",
        },
      }),
    );
    const lines = text().trimEnd().split("\n");
    expect(lines.slice(-3)).toEqual([
      "stopping… (2 of 2 subagents running)",
      "  [alpha] turn cancelled: stopped because its parent turn stopped (cancelled at step boundary) after 1.2 s",
      "  = cancelled: subagent cancelled by its parent",
    ]);
    expect(text()).not.toContain("half done");
  });
});
