/** Tests of the bounded line reader: chunk boundaries, multi-byte characters, torn and over-long lines. */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readLines, type OversizeLine } from "../../packages/host/src/log/logLines.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function linesOf(content: string | Buffer, maxLineBytes?: number): { lines: string[]; oversize: OversizeLine[] } {
  const dir = mkdtempSync(join(tmpdir(), "muse-lines-"));
  dirs.push(dir);
  writeFileSync(join(dir, "f"), content);
  const fd = openSync(join(dir, "f"), "r");
  const oversize: OversizeLine[] = [];
  try {
    const options =
      maxLineBytes === undefined ? { onOversize: (o: OversizeLine) => oversize.push(o) } : { maxLineBytes, onOversize: (o: OversizeLine) => oversize.push(o) };
    return { lines: [...readLines(fd, options)], oversize };
  } finally {
    closeSync(fd);
  }
}

describe("readLines", () => {
  it("yields every line, including empty ones and a last one with no newline", () => {
    expect(linesOf("a\n\nb\nc").lines).toEqual(["a", "", "b", "c"]);
    expect(linesOf("a\n").lines).toEqual(["a"]);
    expect(linesOf("").lines).toEqual([]);
  });

  it("joins lines across 64 KiB chunks, and multi-byte characters split between them", () => {
    const long = "é".repeat(70_000); // 140 000 bytes: spans three chunks, a character cut at each boundary
    const other = "x".repeat(65_535);
    expect(linesOf(`${other}\n${long}\nend\n`).lines).toEqual([other, long, "end"]);
  });

  it("reports and skips a line over the bound, wherever it ends, and goes on", () => {
    const big = `{"type":"notification","at":1,"n":7,${"y".repeat(200_000)}`;
    const { lines, oversize } = linesOf(`first\n${big}\nafter\n${"z".repeat(300)}`, 100);
    expect(lines).toEqual(["first", "after"]);
    expect(oversize).toHaveLength(2);
    expect(oversize[0]).toMatchObject({ line: 2, offset: 6, bytes: big.length });
    expect(oversize[0]?.head).toBe(big.slice(0, 256));
    expect(oversize[1]).toMatchObject({ line: 4, bytes: 300, head: "z".repeat(256) }); // a torn last line too
  });

  it("a line of exactly the bound is kept", () => {
    expect(linesOf(`${"a".repeat(100)}\nb`, 100).lines).toEqual(["a".repeat(100), "b"]);
  });
});
