/**
 * The Vue and Svelte snippets of docs/sessions-that-survive.md (docs/examples/browser/{vue,svelte}-session)
 * over a real session on the reference host (stdio). Vue is not a dependency of this repository:
 * its two APIs are stand-ins with the documented contracts (`shallowRef` is a box, `onScopeDispose`
 * collects disposers). Svelte's store contract needs no stand-in.
 */
import { describe, expect, it, vi } from "vitest";
import { exampleModelPath, spawnReferenceHost } from "../../src/node/index.js";
import { openSession, type SessionSnapshot } from "../../src/session/index.js";

const vue = vi.hoisted(() => ({ disposers: [] as (() => void)[] }));
vi.mock("vue", () => ({ shallowRef: <T>(value: T) => ({ value }), onScopeDispose: (fn: () => void) => vue.disposers.push(fn) }));
const { useSession } = await import("../../docs/examples/browser/vue-session.js");
const { sessionStore } = await import("../../docs/examples/browser/svelte-session.js");

describe("the session as a Vue ref and a Svelte store", () => {
  it("both follow every snapshot until they are let go, and end on the turn's own terminal", async () => {
    const hosts: Array<{ close(): Promise<unknown> }> = [];
    const session = await openSession({
      connect: async () => {
        const host = spawnReferenceHost({ script: exampleModelPath("hello") });
        hosts.push(host);
        return host;
      },
      onWarning: () => {},
    });
    try {
      const ref = useSession(session);
      const seen: SessionSnapshot[] = [];
      const unsubscribe = sessionStore(session).subscribe((snapshot) => seen.push(snapshot));
      expect(seen).toEqual([session.getSnapshot()]); // the store contract: run at once
      const turn = session.startTurn("hello");
      const ended = await turn.settled({ timeoutMs: 15_000 });
      expect(ended.terminal?.terminal).toBe("completed");
      expect(ref.value).toBe(session.getSnapshot());
      expect(seen.at(-1)).toBe(session.getSnapshot());
      expect(seen.length).toBeGreaterThan(3);
      // Let go: no more updates reach either.
      unsubscribe();
      for (const dispose of vue.disposers.splice(0)) dispose();
      const before = { ref: ref.value, count: seen.length };
      await session.startTurn("hello again").settled({ timeoutMs: 15_000 });
      expect(ref.value).toBe(before.ref);
      expect(seen).toHaveLength(before.count);
    } finally {
      await session.close();
      for (const host of hosts) await host.close();
    }
  }, 30_000);
});
