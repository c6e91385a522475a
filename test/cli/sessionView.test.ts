/**
 * The text view on MSP 2.0's wire: each item/delta of a message writes its `append` as it comes
 * (the text is never written again); a patch or a tool's output delta is shown from the whole item
 * the client folded; an item first seen mid-stream is shown whole; a delta the client could not
 * apply writes nothing, and the completion shows what was missed.
 */
import { describe, expect, it } from "vitest";
import { foldItem, type Item, type MspNotification } from "../../src/index.js";
import { Screen } from "../../packages/host/src/cli/screen.js";
import { TextView } from "../../packages/host/src/cli/textView.js";
import { styles } from "../../packages/host/src/cli/style.js";

const S = "s1";
const T = "t1";
const at = "2025-08-07T18:50:00.000Z";
let cursor = 0;
const note = (method: string, params: Record<string, unknown>): MspNotification => ({
  method,
  params: { sessionId: S, viewCursor: `v:${S}:${++cursor}`, ...params },
});
const message = { itemId: "m1", kind: "message", turnId: T, revision: 1, status: "inProgress", recordedAt: at, text: "" } as const;
const tool = {
  itemId: "c1",
  kind: "toolCall",
  turnId: T,
  revision: 1,
  status: "inProgress",
  recordedAt: at,
  tool: "shell",
  callId: "call_1",
  args: '{"command":"make"}',
  visibleOutput: "",
  truncated: false,
} as const;

/** A text view over a sink that keeps each write, and a client-like fold (foldItem) that gives the view each notification's whole item. */
function viewed(): { writes: string[]; show: (n: MspNotification, apply?: boolean) => void; seed: (item: Item) => void } {
  const writes: string[] = [];
  const view = new TextView(new Screen({ write: (text: string) => writes.push(text) }, { progress: false }), styles(false), { showTurnIds: false });
  const held = new Map<string, Item>();
  const show = (n: MspNotification, apply = true) => {
    const params = n.params as Record<string, unknown>;
    const itemId = n.method === "item/delta" ? String(params["itemId"]) : (params["item"] as Item | undefined)?.itemId;
    let item: Item | undefined;
    if (itemId !== undefined && apply) {
      const next = foldItem(held.get(itemId), n.method, params);
      if (typeof next === "object") held.set(itemId, (item = next));
    }
    view.notification(n, item);
  };
  return { writes, show, seed: (item) => held.set(item.itemId, item) };
}

const delta = (itemId: string, revision: number, field: string, append: string) =>
  note("item/delta", { turnId: T, itemId, revision, field, append, recordedAt: at });

describe("TextView on item/delta", () => {
  it("writes each append of a message as it comes, and never the whole text again", () => {
    const { writes, show } = viewed();
    show(note("item/started", { item: message }));
    show(delta("m1", 2, "text", "Hel"));
    show(delta("m1", 3, "text", "lo, "));
    show(delta("m1", 4, "text", "world"));
    expect(writes).toEqual(["Hel", "lo, ", "world"]);
    show(note("item/completed", { item: { ...message, revision: 5, status: "completed", text: "Hello, world" } }));
    expect(writes.join("")).toBe("Hello, world\n");
  });

  it("shows a tool's output line by line from its deltas and a truncating patch", () => {
    const { writes, show } = viewed();
    show(note("item/started", { item: tool }));
    show(delta("c1", 2, "visibleOutput", "compiling\nlin"));
    show(delta("c1", 3, "visibleOutput", "king\n"));
    show(
      note("item/updated", {
        item: { itemId: "c1", turnId: T, kind: "toolCall", revision: 4, recordedAt: at, visibleOutput: "compiling\nlinking\nte", truncated: true },
      }),
    );
    show(note("item/completed", { item: { ...tool, revision: 5, status: "completed", visibleOutput: "compiling\nlinking\nte", truncated: true } }));
    expect(writes.join("")).toBe("> shell: make\n  | compiling\n  | linking\n  | te\n  | … (output truncated)\n  = completed\n");
  });

  it("shows an item first seen mid-stream (a resume after a cursor) whole, then its appends", () => {
    const { writes, show, seed } = viewed();
    seed({ ...message, revision: 3, text: "Hello, " } as Item);
    show(delta("m1", 4, "text", "world"));
    show(delta("m1", 5, "text", "!"));
    expect(writes).toEqual(["Hello, world", "!"]);
  });

  it("writes nothing for a delta the client could not apply; the completion shows the rest", () => {
    const { writes, show } = viewed();
    show(note("item/started", { item: message }));
    show(delta("m1", 2, "text", "Hel"));
    show(delta("m1", 4, "text", "world"), false); // a gap: the client applied nothing
    show(note("item/completed", { item: { ...message, revision: 5, status: "completed", text: "Hello, world" } }));
    expect(writes.join("")).toBe("Hello, world\n");
  });
});
