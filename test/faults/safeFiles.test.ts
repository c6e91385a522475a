/**
 * Finding 4 (planted files in --data), with real `muse-host` processes: a `sessions/` that is a
 * symlink is refused; a log that is a symlink, a FIFO, a link to /dev/zero, a directory or a hard
 * link is reported on stderr and skipped at startup (never followed, never written, never blocked
 * on), and is no session to resume either.
 */
import { execFileSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { uuidv7 } from "../../packages/protocol/src/uuidv7.js";
import { describe, expect, it } from "vitest";
import { fixture, useHostProcesses } from "../host/hostProcess.js";
import { exitOf, serving } from "./hostHelpers.js";

const { start, tempDir } = useHostProcesses("muse-host-planted-");

/** The text of a session log whose one turn a crash left open: recovery would append its terminal. */
function openTurnLog(sessionId: string): string {
  const at = Date.now();
  const turnId = uuidv7();
  return (
    [
      { type: "session", at, sessionId, model: "default" },
      { type: "turnAccepted", at, turnId, input: [], disposition: "started" },
      { type: "turnStarted", at, turnId, turn: 0 },
      {
        type: "notification",
        at,
        n: 1,
        method: "turn/started",
        params: { sessionId, viewCursor: `v:${sessionId}:1`, emittedAtMs: at, turnId, model: "default" },
      },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n") + "\n"
  );
}

describe("finding 4: safe files in the data dir", () => {
  it("finding 4: a sessions/ that is a symlink is refused: exit 2, one line, nothing written where it points", async () => {
    const data = tempDir();
    const outside = tempDir();
    symlinkSync(outside, join(data, "sessions"));
    const host = start(["--script", fixture("hello.json"), "--data", data]);
    expect(await exitOf(host)).toEqual({ code: 2, signal: null });
    expect(host.stderr).toBe(`muse-host: ${join(data, "sessions")} is a symlink; refusing to use it\n`);
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(data, "host.lock"))).toBe(false); // the lock is not left behind
  });

  /** One planted entry: how to make it in `sessions/` (given a dir outside the data dir), and the reason startup gives. */
  const planted: Array<{ what: string; why: string; plant: (sessions: string, outside: string, sessionId: string) => string }> = [
    {
      what: "a symlink to a log outside the data dir",
      why: "a symlink",
      plant: (sessions, outside, sessionId) => {
        writeFileSync(join(outside, "victim.jsonl"), openTurnLog(sessionId));
        symlinkSync(join(outside, "victim.jsonl"), join(sessions, `${sessionId}.jsonl`));
        return `${sessionId}.jsonl`;
      },
    },
    {
      what: "a hard link to a log outside the data dir",
      why: "hard-linked (2 links)",
      plant: (sessions, outside, sessionId) => {
        writeFileSync(join(outside, "victim.jsonl"), openTurnLog(sessionId));
        linkSync(join(outside, "victim.jsonl"), join(sessions, `${sessionId}.jsonl`));
        return `${sessionId}.jsonl`;
      },
    },
    {
      what: "a FIFO",
      why: "a FIFO",
      plant: (sessions, _outside, sessionId) => {
        execFileSync("mkfifo", [join(sessions, `${sessionId}.jsonl`)]);
        return `${sessionId}.jsonl`;
      },
    },
    {
      what: "a symlink to /dev/zero",
      why: "a symlink",
      plant: (sessions, _outside, sessionId) => {
        symlinkSync("/dev/zero", join(sessions, `${sessionId}.jsonl`));
        return `${sessionId}.jsonl`;
      },
    },
    {
      what: "a directory named x.jsonl",
      why: "a directory",
      plant: (sessions, _outside, sessionId) => {
        mkdirSync(join(sessions, `${sessionId}.jsonl`));
        return `${sessionId}.jsonl`;
      },
    },
  ];

  it.each(planted)("finding 4: $what in sessions/ is reported on stderr and skipped; startup does not block; it is no session", async ({ why, plant }) => {
    const data = tempDir();
    const outside = tempDir();
    const sessions = join(data, "sessions");
    mkdirSync(sessions);
    const plantedId = uuidv7();
    const name = plant(sessions, outside, plantedId);
    const victim = existsSync(join(outside, "victim.jsonl")) ? readFileSync(join(outside, "victim.jsonl"), "utf8") : undefined;
    // And one healthy log with an open turn, which recovery must still close.
    const healthy = uuidv7();
    writeFileSync(join(sessions, `${healthy}.jsonl`), openTurnLog(healthy));

    const host = start(["--script", fixture("hello.json"), "--data", data]);
    await serving(host, 10_000);
    expect(host.stderr).toContain(`muse-host: skipping sessions/${name}: it is ${why}\n`);
    expect(host.stderr).toContain(`recovered session ${healthy}: closed 1 turn(s)`);
    // Not a session to resume, and resuming it reads or writes nothing through it.
    const answer = await host.request("session/resume", { sessionId: plantedId });
    expect(answer.error?.data).toMatchObject({ reason: "unknown_session" });
    if (victim !== undefined) expect(readFileSync(join(outside, "victim.jsonl"), "utf8")).toBe(victim);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });
});
