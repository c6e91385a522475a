/** Tests of PendingCommands: ids, answers, abandoned commands and close. */
import { describe, expect, it } from "vitest";
import { boundedWait } from "../../src/internal/boundedWait.js";
import { PendingCommands } from "../../src/internal/pendingCommands.js";

function send(commands: PendingCommands, method: string, timeoutMs = 60_000) {
  const id = commands.nextId();
  const wait = boundedWait<Record<string, unknown>>(method, { method }, { timeoutMs }, timeoutMs, () => commands.settled(id));
  commands.add(id, { method, wait });
  return { id, wait };
}

describe("PendingCommands", () => {
  it("hands out increasing ids; an answer takes its command once", () => {
    const commands = new PendingCommands();
    const a = send(commands, "host/info");
    const b = send(commands, "session/create");
    expect([a.id, b.id, commands.size]).toEqual([1, 2, 2]);
    const taken = commands.take(a.id);
    expect(taken?.method).toBe("host/info");
    taken?.wait.resolve({});
    expect([commands.take(a.id), commands.takeAbandoned(a.id), commands.take("1"), commands.size]).toEqual([undefined, undefined, undefined, 1]);
  });

  it("remembers a command its caller gave up on, so its late answer is told apart once", async () => {
    const commands = new PendingCommands();
    const { id, wait } = send(commands, "host/info", 1);
    await expect(wait.promise).rejects.toMatchObject({ kind: "timeout" });
    expect([commands.size, commands.take(id)]).toEqual([0, undefined]);
    expect([commands.takeAbandoned(id), commands.takeAbandoned(id)]).toEqual([expect.objectContaining({ method: "host/info" }), undefined]);
  });

  it("closeAll rejects every pending command and abandons none", async () => {
    const commands = new PendingCommands();
    const a = send(commands, "host/info");
    const late = send(commands, "turn/start", 1);
    await late.wait.promise.catch(() => {});
    const closed = new Error("closed");
    commands.closeAll(closed);
    await expect(a.wait.promise).rejects.toBe(closed);
    expect([commands.size, commands.takeAbandoned(a.id), commands.takeAbandoned(late.id)]).toEqual([0, undefined, undefined]);
  });
});
