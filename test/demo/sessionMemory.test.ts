/**
 * What the Stop-button app keeps across a reload (demo/sessionMemory.ts): the token, the session,
 * the cursor and the turns, written together and read back checked; junk, a full storage and a
 * new token never break the page.
 */
import { describe, expect, it } from "vitest";
import type { ToolCallItem, TurnCompletedParams } from "@muse-code/sdk";
import { SessionMemory } from "../../demo/sessionMemory.js";
import { TurnBook } from "../../demo/turnBook.js";

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
    expect(again.turns).toEqual([{ turnId: TURN, prompt: "Build the project", phase: "running", items: [tool("building 60 modules\n")], stopRequested: true }]);
  });

  it("keeps a terminal, cuts a long output, and drops what is not an item", () => {
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
    expect([item.visibleOutput.length, item.truncated]).toEqual([32 * 1024, true]);

    const raw = JSON.parse(store.getItem("muse-demo:v1") ?? "") as { turns: { items: unknown[] }[] };
    raw.turns[0]?.items.push({ itemId: 1 }, "junk");
    store.setItem("muse-demo:v1", JSON.stringify(raw));
    expect(new SessionMemory(store).value.turns[0]?.items).toHaveLength(1);
  });

  it("a new token forgets the old host's session; junk and a full storage remember nothing and throw nothing", () => {
    const store = storage();
    const memory = new SessionMemory(store);
    memory.rememberToken("old");
    memory.rememberSession(SESSION, `v:${SESSION}:3`, new TurnBook());
    memory.rememberToken("new");
    expect(new SessionMemory(store).value).toEqual({ token: "new", turns: [] });

    store.setItem("muse-demo:v1", "{not json");
    expect(new SessionMemory(store).value).toEqual({ turns: [] });
    const full = new SessionMemory(storage(true));
    expect(() => full.rememberToken("t")).not.toThrow();
    expect(full.value.token).toBe("t"); // still known to this page load
    expect(new SessionMemory(undefined).value).toEqual({ turns: [] });
  });
});
