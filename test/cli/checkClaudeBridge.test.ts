/**
 * `muse check --model acp --spawn "muse serve --stdio --agent acp -- claude-agent-acp"`, end to
 * end: the real `muse check` (the bundled bin) against a real ACP-bridged host (the bundled
 * `muse serve`), whose agent is Claude Code through its pinned ACP adapter
 * (@agentclientprotocol/claude-agent-acp 0.101.0) with the directive-playing Messages server
 * (test/fixtures/check-model/directiveMessages.ts) as its model, in Claude Code's `default`
 * permission mode with rules that let the check's shell loops run and ask about a step that asks
 * (its command begins `touch msp-check-asked`). Every scenario must
 * pass, be not applicable with a reason (exactly the expected set), or fail only as a pinned
 * behaviour of the agent makes it fail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeAcpCommand, makeClaudeHome, type ClaudeTestHome } from "../fixtures/acp/claudeAcpHome.js";
import { startDirectiveMessages, type DirectiveMessagesServer } from "../fixtures/check-model/directiveMessages.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { problemsOf, rowsOf } from "./checkTable.js";
import { runMuse, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const q = (word: string) => JSON.stringify(word);
let model: DirectiveMessagesServer;
let home: ClaudeTestHome;
let data: { dir: string; remove(): void };
beforeAll(async () => {
  model = await startDirectiveMessages();
  // Claude Code runs the check's shell loops without asking, and asks about a step that asks (it begins with this touch).
  home = makeClaudeHome(model.baseUrl, { allow: ["Bash"], ask: ["Bash(touch msp-check-asked:*)"] });
  data = tempDataDir();
});
afterAll(async () => {
  await model?.close();
  home?.remove();
  data?.remove();
});

/** The scenarios each capability the bridged host lacks (host/info says so) makes not applicable. */
const NEEDING: Record<string, readonly string[]> = {
  policyHooks: ["hook stop's cause"],
  steering: ["steer after terminal rejected", "a splice on default cancel", "no splice with keepInbox", "deltas around a steer"],
  subagents: ["stop a tree", "a child fails on its own", "a child's question withdrawn", "restart mid-tree"],
};

/**
 * The decisions Claude Code's permission requests do not offer, and the scenarios that need them:
 * for these commands it offers `allow_once` and `reject_once` only, so the bridge offers neither
 * `denyAndStop` nor `approveForSession`.
 */
const NOT_OFFERED: Record<string, readonly string[]> = {
  denyAndStop: ["deny and stop"],
  approveForSession: ["session grant is exact", "grant stays in its session"],
};

/**
 * What Claude Code does that the check rightly reports, pinned by the pattern of each problem, in
 * order: through claude-agent-acp 0.101.0 a foreground command's output comes only when it ends
 * (one `terminal_output` with all of it; only background work streams), so a scenario that stops
 * or shuts down a turn once its tool has printed never sees it print, within its 20 s bound, a
 * minute-long command, and leaves that turn without a terminal when it gives up.
 */
const NO_OUTPUT_WHILE_RUNNING = [
  /^timed out after 20000 ms waiting for the tool call's first output \(an item\/delta of its visibleOutput\) of turn \S+$/,
  /^line \d+: turn \S+, accepted here, never gets a turn\/completed \(invariant 1\)$/,
];
const AGENT_BEHAVIOUR: Record<string, readonly RegExp[]> = {
  "cancel mid-tool": NO_OUTPUT_WHILE_RUNNING,
  "usage on a cancelled turn": NO_OUTPUT_WHILE_RUNNING,
  "shutdown mid-tool": NO_OUTPUT_WHILE_RUNNING,
};

describe("muse check against the ACP bridge with Claude Code (real muse check, real muse serve --agent acp, real claude-agent-acp 0.101.0)", () => {
  it("passes every scenario the bridge supports, reports the rest not applicable, and fails only as the agent's pinned behaviour makes it", async () => {
    const agent = claudeAcpCommand().map(q).join(" ");
    const serve = `cd ${q(home.workDir)} && exec ${q(process.execPath)} ${q(bundles().host)} serve --stdio --agent acp --data ${q(data.dir)} -- ${agent}`;
    const result = await runMuse(bundles(), ["check", "--model", "acp", "--spawn", `sh -c ${q(serve)}`], { timeoutMs: 600_000, env: home.env });
    console.log(result.stdout);
    const rows = rowsOf(result.stdout);
    expect(rows).toHaveLength(30);

    // Failed: none but a pinned behaviour of the agent, each failing with exactly its problems.
    for (const row of rows.filter((r) => r.verdict === "FAIL")) {
      const problems = problemsOf(result.stdout, row.scenario);
      const pinned = AGENT_BEHAVIOUR[row.scenario] ?? [];
      expect(problems.length === pinned.length && problems.every((p, i) => pinned[i]?.test(p) === true), `${row.scenario} failed: ${problems.join("; ")}`).toBe(
        true,
      );
    }
    const notApplicable = rows.filter((r) => r.verdict === "N/A");
    for (const row of notApplicable) expect(row.note).toMatch(/^\(not run: not applicable \((capability \w+|\w+) absent\): .+\)$/);
    const seen = notApplicable.map((r) => `${r.scenario}: ${/not applicable \((?:capability )?(\w+) absent\)/.exec(r.note)?.[1] ?? "?"}`);
    const expected = Object.entries({ ...NEEDING, ...NOT_OFFERED }).flatMap(([absent, scenarios]) => scenarios.map((scenario) => `${scenario}: ${absent}`));
    expect(seen.sort()).toEqual(expected.sort());
    const failed = rows.filter((r) => r.verdict === "FAIL").length;
    expect(rows.filter((r) => r.verdict === "PASS")).toHaveLength(30 - expected.length - failed);
    expect(result.code).toBe(failed === 0 ? 0 : 1);
    expect(model.requests.some((r) => r.steps !== undefined)).toBe(true);
  }, 620_000);
});
