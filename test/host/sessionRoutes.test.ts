/**
 * The host's routing table (packages/host/src/server/sessionRoutes.ts): who hears a session, who
 * speaks for it, and the tree, with its bounds. The property drives random links, connections and
 * running turns, and checks after every step that the tables stay within their bounds and that a
 * running child's link is never forgotten.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SessionRoutes } from "../../packages/host/src/server/sessionRoutes.js";

interface Target {
  name: string;
}

describe("SessionRoutes", () => {
  it("a child linked below a heard session is heard and spoken for by the parent's connections, in their order", () => {
    const routes = new SessionRoutes<Target>();
    const a = { name: "a" };
    const b = { name: "b" };
    routes.hear(a, "p");
    routes.hear(b, "p");
    routes.speak(a, "p");
    routes.speak(b, "p");
    expect(routes.link("p", "c")).toEqual([a, b]);
    expect(routes.speakerOf("c")).toBe(b);
    routes.stopSpeaking(b);
    expect(routes.speakerOf("c")).toBe(a);
    expect(routes.speakerOf("p")).toBe(a);
    // A connection that resumes the parent later hears and speaks for the child too.
    const late = { name: "late" };
    expect(routes.hear(late, "p")).toBe(true);
    expect(routes.hears(late, "c")).toBe(true);
    expect(routes.speak(late, "p")).toEqual(["p", "c"]);
    expect(routes.speakerOf("c")).toBe(late);
    expect(routes.leave(a)).toEqual([]);
    expect(routes.leave(late)).toEqual([]);
    expect(routes.leave(b).sort()).toEqual(["c", "p"]);
  });

  it("admits a session it hears at the bound, and refuses another", () => {
    const routes = new SessionRoutes<Target>({ maxSessionsPerConnection: 2 });
    const a = { name: "a" };
    routes.hear(a, "s1");
    routes.link("s1", "child");
    expect(routes.admits(a, undefined)).toBe(true);
    routes.hear(a, "s2");
    expect(routes.admits(a, undefined)).toBe(false);
    expect(routes.admits(a, "s3")).toBe(false);
    expect(routes.admits(a, "s1")).toBe(true);
    expect(routes.admits(a, "child")).toBe(true); // heard through the tree
    expect(routes.admits({ name: "b" }, "s3")).toBe(true);
  });

  it("past maxLinks forgets the oldest idle child's link; who heard it only through the tree stops hearing it", () => {
    const busy = new Set(["c1"]);
    const routes = new SessionRoutes<Target>({ maxLinks: 2, busy: (id) => busy.has(id) });
    const a = { name: "a" };
    const own = { name: "own" };
    const unheard: string[] = [];
    routes.onUnheard((target, sessionId) => unheard.push(`${target.name}:${sessionId}`));
    routes.hear(a, "p");
    routes.speak(a, "p");
    routes.link("p", "c1");
    routes.link("p", "c2");
    routes.hear(own, "c2"); // resumed by its own id
    routes.link("p", "c3"); // c1 runs: c2, the oldest idle one, is forgotten
    expect(routes.descendantsOf("p")).toEqual(["c1", "c3"]);
    expect(routes.hears(a, "c2")).toBe(false);
    expect(routes.speakerOf("c2")).toBeUndefined();
    expect(routes.hears(own, "c2")).toBe(true); // its own session stays heard
    expect(unheard).toEqual(["a:c2"]);
    busy.clear();
    routes.link("p", "c4");
    expect(routes.descendantsOf("p")).toEqual(["c3", "c4"]);
    expect(routes.linkCount).toBe(2);
  });

  it("keeps every table within its bound under any interleaving, and never forgets a running child", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("hear" as const), target: fc.nat(3), session: fc.nat(30) }),
      fc.record({ kind: fc.constant("link" as const), parent: fc.nat(30), child: fc.nat(30) }),
      fc.record({ kind: fc.constant("run" as const), session: fc.nat(30) }),
      fc.record({ kind: fc.constant("end" as const), session: fc.nat(30) }),
      fc.record({ kind: fc.constant("leave" as const), target: fc.nat(3) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const maxLinks = 4;
        const running = new Set<string>();
        const routes = new SessionRoutes<Target>({ maxLinks, maxSessionsPerConnection: 3, busy: (id) => running.has(id) });
        const targets = [0, 1, 2, 3].map((i) => ({ name: `t${i}` }));
        const own = new Map<Target, Set<string>>();
        /** Own sessions each target took that it did not hear already: what the bound counts. */
        const taken = new Map<Target, number>();
        for (const o of ops) {
          const linkedRunning = [...running].filter((id) => routes.parentOf(id) !== undefined);
          if (o.kind === "hear") {
            const target = targets[o.target] as Target;
            const id = `s${o.session}`;
            if (!routes.admits(target, id)) continue;
            if (!routes.hears(target, id)) taken.set(target, (taken.get(target) ?? 0) + 1);
            routes.hear(target, id);
            let set = own.get(target);
            if (set === undefined) own.set(target, (set = new Set()));
            set.add(id);
          } else if (o.kind === "link") {
            routes.link(`s${o.parent}`, `s${o.child}`);
          } else if (o.kind === "run") {
            running.add(`s${o.session}`);
          } else if (o.kind === "end") {
            running.delete(`s${o.session}`);
          } else {
            routes.leave(targets[o.target] as Target);
            own.delete(targets[o.target] as Target);
            taken.delete(targets[o.target] as Target);
          }
          for (const id of linkedRunning) if (running.has(id)) expect(routes.parentOf(id)).toBeDefined();
          const runningLinked = [...running].filter((id) => routes.parentOf(id) !== undefined).length;
          // Links: the bound, plus the running children it may not forget, plus the one just made.
          expect(routes.linkCount).toBeLessThanOrEqual(maxLinks + runningLinked + 1);
          for (const target of targets) {
            const mine = own.get(target)?.size ?? 0;
            expect(taken.get(target) ?? 0).toBeLessThanOrEqual(3);
            // What a connection hears: its own sessions and the links below them, nothing else.
            expect(routes.heardCount(target)).toBeLessThanOrEqual(mine + routes.linkCount);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
