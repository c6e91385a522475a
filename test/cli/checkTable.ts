/** Reading `muse check`'s printed table in tests: its rows, and the problems listed under a failed scenario. */

/** One row of the table: the scenario, its verdict, and the note after its time. */
export interface Row {
  scenario: string;
  verdict: string;
  note: string;
}

/** The table rows of `muse check`'s stdout. */
export function rowsOf(stdout: string): Row[] {
  const rows: Row[] = [];
  for (const line of stdout.split("\n")) {
    const m = /^(.{30})(PASS|FAIL|N\/A) +\d+ ms(.*)$/.exec(line);
    if (m !== null) rows.push({ scenario: (m[1] as string).trim(), verdict: m[2] as string, note: (m[3] as string).trim() });
  }
  return rows;
}

/** The problems `muse check` lists under `FAIL <scenario>`. */
export function problemsOf(stdout: string, scenario: string): string[] {
  const lines = stdout.split("\n");
  const at = lines.indexOf(`FAIL ${scenario}`);
  const out: string[] = [];
  for (let i = at + 1; at >= 0 && i < lines.length && (lines[i] as string).startsWith("  - "); i++) out.push((lines[i] as string).slice(4));
  return out;
}

/** The session ids named in the wire lines `muse check` prints under `FAIL <scenario>`, in order, each once. */
export function sessionsOf(stdout: string, scenario: string): string[] {
  const lines = stdout.split("\n");
  const at = lines.indexOf(`FAIL ${scenario}`);
  const out = new Set<string>();
  for (let i = at + 1; at >= 0 && i < lines.length && (lines[i] as string) !== ""; i++) {
    for (const m of (lines[i] as string).matchAll(/"sessionId":"([^"]+)"/g)) out.add(m[1] as string);
  }
  return [...out];
}
