/**
 * `muse check`'s transcript rule (transcriptRule: checkTranscript, the cancel cause, foreign
 * sessions) on the seed page's own Stop ("Cancel a running turn", test/fixtures/cookbook-pages): it
 * passes marked as beginning mid-session with gaps, with a note for the missing cause; a wrong cause
 * still fails; and on a whole wire, an item that never started still fails.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { WireLine } from "../../packages/host/src/cli/check/checkWire.js";
import { transcriptRule } from "../../packages/host/src/cli/check/transcriptRule.js";
import { repoRoot } from "../helpers/repoRoot.js";

function wireOf(path: string): WireLine[] {
  return readFileSync(join(repoRoot, path), "utf8")
    .trimEnd()
    .split("\n")
    .map((text, i) => {
      const { dir, raw } = JSON.parse(text) as { dir: "client" | "server"; raw: string };
      return { line: i + 1, dir, raw, message: JSON.parse(raw) as Record<string, unknown> };
    });
}

const SEED = "test/fixtures/cookbook-pages/cancel-a-running-turn.jsonl";
const T = "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f10";

/** The seed's wire with its terminal's cause set to `cause`. */
function withCause(cause: Record<string, unknown>): WireLine[] {
  return wireOf(SEED).map((l) => {
    if (l.message?.["method"] !== "turn/completed") return l;
    const message = structuredClone(l.message);
    (message["params"] as Record<string, unknown>)["cause"] = cause;
    return { ...l, raw: JSON.stringify(message), message };
  });
}

describe("muse check's transcript rule on the seed page's Stop", () => {
  it("passes the page's exact four exchanges marked with gaps, with one note for the missing cause", () => {
    const findings = transcriptRule(wireOf(SEED), { gaps: true, beginsMidSession: true });
    expect(findings.problems).toEqual([]);
    expect(findings.notes).toEqual([
      `line 6: turn/completed of turn ${T} is cancelled with no cause after the host accepted the client's turn/cancel at line 4: a host that sends a cause says "user" here`,
    ]);
  });

  it("fails a wrong cause: disposed or hook after the client's turn/cancel", () => {
    for (const cause of [{ kind: "disposed" }, { kind: "hook", reason: "budget" }]) {
      const { problems } = transcriptRule(withCause(cause), { gaps: true, beginsMidSession: true });
      expect(problems).toContainEqual(
        `line 6: turn/completed of turn ${T} is cancelled with cause.kind "${cause.kind}", but the host accepted the client's turn/cancel at line 4: a Stop's cause is "user"`,
      );
      expect(problems).toContainEqual(
        expect.stringMatching(/^line 6: .* after the client's turn\/cancel at line 3, with cause \{"kind":"(disposed|hook)".*\(cancel cause\)$/),
      );
    }
  });

  it("is a whole wire without the marks: a foreign session and an item that never started", () => {
    const { problems } = transcriptRule(wireOf(SEED));
    expect(problems).toContainEqual(`line 5: item/completed for item 0198f0ad-0001-7000-8000-000000000010 before any item/started of it (invariant A)`);
    expect(problems).toContainEqual(expect.stringMatching(/a foreign session/));
  });

  it("still fails a whole wire whose item/completed has no item/started", () => {
    const { problems } = transcriptRule(wireOf("transcripts/broken/invariant-A-completed-never-started.jsonl"));
    expect(problems).toEqual([expect.stringMatching(/^line 8: item\/completed for item \S+ before any item\/started of it \(invariant A\)$/)]);
  });
});
