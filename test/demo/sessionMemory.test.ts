/**
 * What the Stop-button app keeps across a reload (demo/sessionMemory.ts): the token, the session,
 * the cursor and the turns, written together and read back checked; a text over the size is kept
 * cut and listed as cut (MSP 2.0 sends no finished item whole again); junk, a full storage and a
 * new token never break the page. And the book's rule for item/delta (demo/turnBook.ts): the
 * views get an append only when they show the item's previous revision whole.
 */
import { describe, expect, it } from "vitest";
import type { MessageItem, ToolCallItem, TurnCompletedParams } from "@muse-code/sdk";
import { MAX_FIELD_CHARS, SessionMemory } from "../../demo/sessionMemory.js";
import { TurnBook, type ItemAppend } from "../../demo/turnBook.js";

const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const TURN = "0198f0aa-2222-7000-8000-0000000000bb";

/** A Storage over a Map (sessionStorage's interface); `full` makes every write throw, as a full quota does. */
function storage(full = false): Storage {
  const map = new Map<string, string>();
  return {
    get length() {
      return map.size;
    },
    clear: () => map.clear(),
    getItem: (key) => map.get(key) ?? null,
    key: (index) => [...map.keys()][index] ?? null,
    removeItem: (key) => void map.delete(key),
    setItem: (key, value) => {
      if (full) throw new DOMException("quota exceeded", "QuotaExceededError");
      map.set(key, value);
    },
  };
}

function tool(visibleOutput: string): ToolCallItem {
  return {
    itemId: "i1",
    kind: "toolCall",
    turnId: TURN,
    revision: 3,
    status: "inProgress",
    recordedAt: "2026-11-30T13:00:00.000Z",
    tool: "shell",
    callId: "c1",
    args: "{}",
    visibleOutput,
    truncated: false,
  };
}

describe("the Stop-button app's session memory", () => {
  it("reads back the session, the cursor and the turns it wrote", () => {
    const store = storage();
    const memory = new SessionMemory(store);
    memory.rememberToken("t0k3n");
    const book = new TurnBook();
    book.ensure(TURN, "Build the project").stopRequested = true;
    book.putItem(tool("building 60 modules\n"));
    memory.rememberSession(SESSION, `v:${SESSION}:7`, book);

    const again = new SessionMemory(store).value;
    expect(again).toMatchObject({ token: "t0k3n", sessionId: SESSION, cursor: `v:${SESSION}:7` });
    expect(again.turns).toEqual([
      { turnId: TURN, prompt: "Build the project", phase: "running", items: [tool("building 60 modules\n")], cut: [], stopRequested: true },
    ]);
  });

  it("keeps a terminal, cuts a long output and lists it as cut, and drops what is not an item", () => {
    const store = storage();
    const memory = new SessionMemory(store);
    const book = new TurnBook();
    book.putItem(tool("x".repeat(100_000)));
    const terminal: TurnCompletedParams = {
      sessionId: SESSION,
      viewCursor: `v:${SESSION}:9`,
      turnId: TURN,
      terminal: "cancelled",
      reason: "cancelled during tool execution",
      durationMs: 1200,
    };
    book.end(terminal);
    memory.rememberSession(SESSION, terminal.viewCursor, book);
    const kept = new SessionMemory(store).value.turns[0];
    expect(kept?.terminal).toEqual(terminal);
    expect(kept?.phase).toBe("ended");
    const item = kept?.items[0] as ToolCallItem;
    // Cut, and said to be: `truncated` stays the host's word (it did not truncate anything).
    expect([item.visibleOutput.length, item.truncated, kept?.cut]).toEqual([32 * 1024, false, ["i1"]]);

    const raw = JSON.parse(store.getItem("muse-demo:v2") ?? "") as { turns: { items: unknown[]; cut: unknown[] }[] };
    raw.turns[0]?.items.push({ itemId: 1 }, "junk");
    raw.turns[0]?.cut.push(7, "not-an-item-of-the-turn");
    store.setItem("muse-demo:v2", JSON.stringify(raw));
    expect(new SessionMemory(store).value.turns[0]?.items).toHaveLength(1);
    expect(new SessionMemory(store).value.turns[0]?.cut).toEqual(["i1"]);
  });

  it("a new token forgets the old host's session; junk and a full storage remember nothing and throw nothing", () => {
    const store = storage();
    const memory = new SessionMemory(store);
    memory.rememberToken("old");
    memory.rememberSession(SESSION, `v:${SESSION}:3`, new TurnBook());
    memory.rememberToken("new");
    expect(new SessionMemory(store).value).toEqual({ token: "new", turns: [] });

    store.setItem("muse-demo:v2", "{not json");
    expect(new SessionMemory(store).value).toEqual({ turns: [] });
    const full = new SessionMemory(storage(true));
    expect(() => full.rememberToken("t")).not.toThrow();
    expect(full.value.token).toBe("t"); // still known to this page load
    expect(new SessionMemory(undefined).value).toEqual({ turns: [] });
  });

  it("a text cut at the size keeps no half of a surrogate pair, and an item restored cut is remembered cut again", () => {
    const store = storage();
    const book = new TurnBook();
    // An emoji (two code units) across the size: the cut drops its first half too.
    book.putItem(message("a".repeat(MAX_FIELD_CHARS - 1) + "😀" + "b".repeat(10), 4));
    new SessionMemory(store).rememberSession(SESSION, `v:${SESSION}:12`, book);
    const [turn] = new SessionMemory(store).value.turns;
    expect((turn?.items[0] as MessageItem).text).toBe("a".repeat(MAX_FIELD_CHARS - 1));
    expect(turn?.cut).toEqual(["m1"]);

    // Restored after a reload, the short copy is still only the start of the text.
    const again = new TurnBook();
    again.restoreItem(again.ensure(TURN), turn?.items[0] as MessageItem, true);
    new SessionMemory(store).rememberSession(SESSION, `v:${SESSION}:12`, again);
    expect(new SessionMemory(store).value.turns[0]?.cut).toEqual(["m1"]);
  });
});

function message(text: string, revision: number): MessageItem {
  return { itemId: "m1", kind: "message", turnId: TURN, revision, status: "inProgress", recordedAt: "2026-11-30T13:00:00.000Z", text };
}

describe("the Stop-button app's book of turns, on item/delta", () => {
  /** A book whose listener records, per change, the append it was given (or "whole"). */
  function watched(): { book: TurnBook; changes: (string | ItemAppend)[] } {
    const book = new TurnBook();
    const changes: (string | ItemAppend)[] = [];
    book.subscribe((_entry, append) => changes.push(append ?? "whole"));
    return { book, changes };
  }

  it("hands the views the append when it follows the revision they were given, else the whole item", () => {
    const { book, changes } = watched();
    book.putItem(message("", 1));
    book.appendToItem({ item: message("Hel", 2), field: "text", append: "Hel" });
    book.appendToItem({ item: message("Hello", 3), field: "text", append: "lo" });
    book.appendToItem({ item: message("Hello", 3), field: "text", append: "lo" }); // a replay of something seen: nothing
    book.appendToItem({ item: message("Hello, world", 5), field: "text", append: "rld" }); // after a gap: whole
    expect(changes).toEqual([
      "whole",
      { item: message("Hel", 2), field: "text", append: "Hel" },
      { item: message("Hello", 3), field: "text", append: "lo" },
      "whole",
    ]);
    expect(book.get(TURN)?.items.get("m1")).toEqual(message("Hello, world", 5));
  });

  it("never appends to a copy kept cut: the delta's whole item replaces it, as does a whole item of the same revision", () => {
    const { book, changes } = watched();
    const entry = book.ensure(TURN);
    book.restoreItem(entry, message("The sta", 7), true);
    book.appendToItem({ item: message("The start, the middle and the end", 8), field: "text", append: " end" });
    expect(changes).toEqual(["whole"]);
    expect([entry.items.get("m1"), entry.cut.has("m1")]).toEqual([message("The start, the middle and the end", 8), false]);

    book.restoreItem(entry, message("Ano", 9), true);
    book.putItem(message("Another whole text", 9)); // the resume's items, at the remembered revision
    expect([entry.items.get("m1"), entry.cut.has("m1")]).toEqual([message("Another whole text", 9), false]);
    book.putItem(message("Another whole text", 9)); // the same again: nothing to render
    expect(changes).toEqual(["whole", "whole"]);
  });
});
