/**
 * Wire order from a real child: 10 000 interleaved item/* and turn/completed notifications with
 * 100 command responses between them arrive 100 % in wire order, and every response is delivered
 * after every notification that preceded it on the wire.
 */
import { describe, expect, it } from "vitest";
import { outcome, spawnFaulty, useFaultHarness } from "./harness.js";

useFaultHarness();

describe("wire order", () => {
  it("10 000 notifications and 100 responses between them arrive in wire order", async () => {
    const COMMANDS = 100;
    const TURNS = 2_500; // 4 messages per turn: 10 000 notifications
    const EVERY = 97; // a response after every 97th notification, so responses land mid-turn too
    const host = spawnFaulty([["await", COMMANDS], ["flood", TURNS, EVERY], ["hang"]]);
    const seqs: number[] = [];
    const methods: string[] = [];
    host.onNotification((n) => {
      seqs.push(n.params?.["seq"] as number);
      methods.push(n.method);
    });
    const problems: unknown[] = [];
    host.events.on("protocolError", (e) => problems.push(e.data["problem"]));
    // Per response: how many notifications had been delivered when it resolved, and its wire position.
    const resolved: Array<{ id: number; seenBefore: number; wireSeq: number }> = [];
    const commands = Array.from({ length: COMMANDS }, (_, i) =>
      host
        .command("host/info", {})
        .then((result) => resolved.push({ id: i + 1, seenBefore: seqs.length, wireSeq: (result as unknown as Record<string, unknown>)["seq"] as number })),
    );
    const settled = await Promise.all(commands.map((c) => outcome(c)));
    expect(settled.filter((s) => s.error !== undefined)).toEqual([]);
    await host.turns.terminalOf(`turn-${TURNS - 1}`, { timeoutMs: 20_000 });

    expect(problems).toEqual([]);
    expect(seqs).toHaveLength(TURNS * 4);
    // 100 %: the n-th notification delivered is the n-th on the wire.
    const outOfOrder = seqs.findIndex((seq, i) => seq !== i);
    expect(outOfOrder).toBe(-1);
    expect(methods.slice(0, 4)).toEqual(["item/started", "item/updated", "item/completed", "turn/completed"]);
    // Responses resolve in wire order, and each after every notification before it on the wire.
    expect(resolved.map((r) => r.id)).toEqual(Array.from({ length: COMMANDS }, (_, i) => i + 1));
    for (const r of resolved) expect(r.seenBefore).toBeGreaterThanOrEqual(r.wireSeq);
    expect(host.turns.size).toBe(TURNS);
    expect(host.items.itemsOf(`turn-${TURNS - 1}`)[0]?.revision).toBe(3);
  });
});
