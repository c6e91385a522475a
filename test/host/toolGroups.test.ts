/** The tool-group registry's decisions, on synthetic process tables (the fault suite runs real processes). */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseProcStat, type ProcStat } from "../../packages/host/src/tools/procStat.js";
import { judgeToolGroup, parseRecordName, reapToolGroups, recordName, TOOL_GROUPS_DIR } from "../../packages/host/src/tools/toolGroups.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "muse-tool-groups-"));
  dirs.push(dir);
  return dir;
}

const BOOT = "bfbadc14-fb31-43c1-ac60-26510e06260f";
const record = { pid: 500, startTime: 1000, bootId: BOOT };

function table(...procs: Array<Partial<ProcStat> & { pid: number }>): Map<number, ProcStat> {
  return new Map(procs.map((p) => [p.pid, { state: "S", ppid: 1, pgrp: 500, session: 500, startTime: 1000, name: "(sh)", ...p }]));
}

describe("judgeToolGroup", () => {
  it("kills the group when its leader runs with the recorded start time", () => {
    expect(judgeToolGroup(record, table({ pid: 500 }, { pid: 501, startTime: 1005 }), BOOT, [1])).toMatchObject({ outcome: "killed", killed: [500, 501] });
  });

  it("a zombie leader with the recorded start time still proves the group (its pid cannot be reused)", () => {
    expect(judgeToolGroup(record, table({ pid: 500, state: "Z" }, { pid: 501, startTime: 1005, session: 77 }), BOOT, [1])).toMatchObject({
      outcome: "killed",
      killed: [501],
    });
  });

  it("leaves a reused pid alone", () => {
    expect(judgeToolGroup(record, table({ pid: 500, startTime: 999 }), BOOT, [1]).outcome).toBe("reused");
    expect(judgeToolGroup(record, table({ pid: 500, startTime: 2000 }, { pid: 501, startTime: 2000 }), BOOT, [1]).outcome).toBe("reused");
  });

  it("a leaderless group is killed only if every member is in the tool's session and started after the record", () => {
    expect(judgeToolGroup(record, table({ pid: 501, startTime: 1005 }), BOOT, [1]).outcome).toBe("killed");
    expect(judgeToolGroup(record, table({ pid: 501, startTime: 1005 }, { pid: 502, startTime: 990 }), BOOT, [1]).outcome).toBe("reused");
    expect(judgeToolGroup(record, table({ pid: 501, startTime: 1005, session: 400 }), BOOT, [1]).outcome).toBe("reused");
  });

  it("nothing alive, another boot, or a group holding this host: nothing is killed", () => {
    expect(judgeToolGroup(record, table({ pid: 500, state: "Z" }, { pid: 501, state: "Z" }), BOOT, [1]).outcome).toBe("gone");
    expect(judgeToolGroup(record, table(), BOOT, [1]).outcome).toBe("gone");
    expect(judgeToolGroup(record, table({ pid: 500 }), "another-boot", [1]).outcome).toBe("otherBoot");
    expect(judgeToolGroup(record, table({ pid: 501, startTime: 1005 }), BOOT, [501]).outcome).toBe("reused");
  });
});

describe("records and /proc", () => {
  it("a record name round-trips; anything else is not a record", () => {
    expect(parseRecordName(recordName(record))).toEqual(record);
    for (const name of ["", "x", "0-1-ab", "500-01-ab", "500-1", "500-1-ab/..", "99999999999-1-ab", "500-1-ab-zz"])
      expect(parseRecordName(name)).toBeUndefined();
  });

  it("parses /proc/<pid>/stat, whatever the command name holds", () => {
    const rest = "S 1 500 500 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1234 0 0";
    expect(parseProcStat(`501 (a) b) (c) ${rest}`)).toEqual({ pid: 501, name: "(a) b) (c)", state: "S", ppid: 1, pgrp: 500, session: 500, startTime: 1234 });
    expect(parseProcStat("garbage")).toBeUndefined();
  });
});

describe("reapToolGroups", () => {
  it("refuses a tool-groups that is a symlink or a file", () => {
    const data = tempDir();
    mkdirSync(join(data, "elsewhere"));
    symlinkSync(join(data, "elsewhere"), join(data, TOOL_GROUPS_DIR));
    expect(() => reapToolGroups(data)).toThrow(/tool-groups is not a directory \(a symlink\)/);
    const other = tempDir();
    writeFileSync(join(other, TOOL_GROUPS_DIR), "");
    expect(() => reapToolGroups(other)).toThrow(/not a directory/);
  });

  it("reports and leaves alone an entry that is not a record; drops a record of a group that is gone", () => {
    const data = tempDir();
    const dir = join(data, TOOL_GROUPS_DIR);
    mkdirSync(dir);
    writeFileSync(join(dir, "notes.txt"), "");
    // pid 2^31 - 1 is beyond pid_max: nothing of that group can run.
    writeFileSync(join(dir, recordName({ pid: 0x7fffffff, startTime: 1, bootId: "0" })), "");
    const lines: string[] = [];
    const reaped = reapToolGroups(data, (line) => lines.push(line));
    expect(reaped.map((r) => r.outcome)).toEqual([expect.stringMatching(/^(gone|otherBoot)$/)]);
    expect(lines).toEqual([`${join(dir, "notes.txt")} is not a tool-group record: left alone`]);
    expect(readdirSync(dir)).toEqual(["notes.txt"]);
  });
});
