/**
 * `muse check --model acp --spawn "muse serve --stdio --agent acp -- <codex-acp>"`, end to end: the
 * real `muse check` (the bundled bin) against a real ACP-bridged host (the bundled `muse serve`),
 * whose agent is the real pinned codex-acp binary (@zed-industries/codex-acp 0.16.0) with the
 * directive-playing Responses server (test/fixtures/check-model/directiveResponses.ts) as its
 * model. Codex asks before an escalated command (`on-request`, `workspace-write`), so the approval
 * scenarios run; the home is set up for codex-acp (../fixtures/acp/codexAcpHome.ts: a model slug
 * Codex knows, and bubblewrap on PATH). Every scenario must pass, be not applicable with a reason
 * (exactly the expected set), or fail only as a pinned behaviour of the agent makes it fail, or
 * because the agent dropped the end of a command it ran, as its own log says.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codexAcpBinary } from "../fixtures/acp/acpBridgedHost.js";
import { codexAcpHome } from "../fixtures/acp/codexAcpHome.js";
import { makeCodexHome, type CodexTestHome } from "../fixtures/codex/codexHome.js";
import { startDirectiveResponses, type DirectiveResponsesServer } from "../fixtures/check-model/directiveResponses.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { problemsOf, rowsOf, sessionsOf, type Row } from "./checkTable.js";
import { runMuse, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const q = (word: string) => JSON.stringify(word);
let model: DirectiveResponsesServer;
let home: CodexTestHome;
let env: NodeJS.ProcessEnv;
let data: { dir: string; remove(): void };
beforeAll(async () => {
  model = await startDirectiveResponses();
  home = makeCodexHome({ baseUrl: model.baseUrl, approvalPolicy: "on-request", sandboxMode: "workspace-write" });
  env = codexAcpHome(home);
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
/** codex-acp's permission request offers no `reject_always` option, so the bridge offers no denyAndStop. */
const NO_DENY_AND_STOP = ["deny and stop"];

/**
 * What codex-acp 0.16.0 does that the check rightly reports, pinned by its exact problem text: a
 * scenario here fails with exactly these problems (or passes, should the agent change).
 * - `start and complete`: codex-acp sends Codex's reasoning-section break as a thought chunk of
 *   its own ("\n\n", before the summary's text), so the reasoning the agent shows is not the text
 *   the model gave. The bridge shows what the agent sends.
 * - `deny`: for an escalated command Codex offers only `approved`, `approved_execpolicy_amendment`
 *   and `abort`; codex-acp's one reject option (`reject_once`, "No, and tell Codex what to do
 *   differently") is `abort`, which ends Codex's turn (`stopReason: "cancelled"`, unasked). The
 *   denied call fails as it must, but the step after it cannot run: this agent cannot decline a
 *   call and go on.
 * - `usage on a cancelled turn`: codex-acp reports a turn's tokens only as `usage_update.used` (the
 *   tokens in its context: here the step's 120 + 8 + 3) and sends no `PromptResponse.usage`, so the
 *   bridge can show no output or reasoning counts, and the input count it shows is the context's.
 */
const AGENT_BEHAVIOUR: Record<string, readonly string[]> = {
  "start and complete": ["the turn's reasoning item must complete with the directed reasoning"],
  deny: ["the step after the denied tool call must run (the turn goes on)"],
  "usage on a cancelled turn": [
    'the cancelled turn\'s usage must count the step that ran, cut short or not, and not the step that never ran: {"inputTokens":120,"outputTokens":8,"reasoningTokens":3}, it is {"inputTokens":131,"outputTokens":0,"reasoningTokens":0}',
  ],
};

/**
 * codex-acp 0.16.0 routes each Codex event by the id of the submission it belongs to, and drops
 * one whose submission it no longer tracks, logging `Received event for unknown submission ID:
 * … ExecCommandEnd(ExecCommandEndEvent { call_id: "…"` on its stderr. In many runs it so drops a
 * finished command's end: the agent never completes that tool call, and ends its turn with the call
 * still open, which the bridge closes `failed` ("the ACP agent ended the turn without completing
 * the call"), as it must: it cannot know how the command ended. A scenario failing that way is
 * accepted only when every such failed call of its sessions is one the agent's own log says it dropped.
 */
const UNCOMPLETED = "the ACP agent ended the turn without completing the call";
const DROPPED_END = /Received event for unknown submission ID: \S+ ExecCommandEnd\(ExecCommandEndEvent \{ call_id: "([^"]+)"/g;

/** The call ids of the toolCall items each session of the data directory closed `failed` as {@link UNCOMPLETED}, by session id. */
function uncompletedCalls(dataDir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const dir = join(dataDir, "sessions");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".jsonl"))) {
    const calls: string[] = [];
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (!line.includes(UNCOMPLETED)) continue;
      const entry = JSON.parse(line) as { method?: string; params?: { item?: { callId?: string; status?: string; failureReason?: string } } };
      const item = entry.params?.item;
      if (entry.method === "item/completed" && item?.status === "failed" && item.failureReason === UNCOMPLETED && item.callId !== undefined)
        calls.push(item.callId);
    }
    if (calls.length > 0) out.set(file.slice(0, -".jsonl".length), calls);
  }
  return out;
}

describe("muse check against the ACP bridge (real muse check, real muse serve --agent acp, real codex-acp 0.16.0)", () => {
  it("passes every scenario the bridge supports, reports the rest not applicable, and fails only as the agent's pinned behaviour makes it", async () => {
    // codex-acp works in the host's directory: the host is started there, by exec, so the check's signals reach it.
    const serve = `cd ${q(home.workDir)} && exec ${q(process.execPath)} ${q(bundles().host)} serve --stdio --agent acp --data ${q(data.dir)} -- ${q(codexAcpBinary())}`;
    const result = await runMuse(bundles(), ["check", "--model", "acp", "--host-stderr", "--spawn", `sh -c ${q(serve)}`], { timeoutMs: 600_000, env });
    console.log(result.stdout);
    const rows = rowsOf(result.stdout);
    expect(rows.map((r) => r.scenario)).toContain("host info");
    expect(rows).toHaveLength(30);

    // Failed: none but a pinned behaviour of the agent, each failing with exactly its problems.
    const failed = rows.filter((r) => r.verdict === "FAIL");
    const dropped = new Set([...result.stderr.matchAll(DROPPED_END)].map((m) => m[1] as string));
    const uncompleted = uncompletedCalls(data.dir);
    // Every call the bridge closed as never completed is one the agent's log says it dropped the end of.
    for (const [session, calls] of uncompleted) for (const call of calls) expect(dropped, `${call} of session ${session}`).toContain(call);
    for (const row of failed) {
      const problems = problemsOf(result.stdout, row.scenario);
      const pinned = AGENT_BEHAVIOUR[row.scenario];
      if (pinned !== undefined && problems.join("\n") === pinned.join("\n")) continue;
      // Else the scenario failed only because one of its sessions' calls was never completed by the agent.
      const sessions = sessionsOf(result.stdout, row.scenario);
      expect(
        sessions.some((s) => uncompleted.has(s)),
        `${row.scenario} failed (${problems.join("; ")}), and none of its sessions (${sessions.join(", ")}) has a call the agent dropped the end of`,
      ).toBe(true);
    }

    // Not applicable: exactly what the bridged host lacks, each saying what is absent and why; never passed.
    const notApplicable = rows.filter((r) => r.verdict === "N/A");
    for (const row of notApplicable) expect(row.note).toMatch(/^\(not run: not applicable \((capability \w+|\w+) absent\): .+\)$/);
    const absent = (r: Row) => /not applicable \((?:capability )?(\w+) absent\)/.exec(r.note)?.[1];
    const expected = [
      ...Object.entries(NEEDING).flatMap(([capability, scenarios]) => scenarios.map((scenario) => `${scenario}: capability ${capability}`)),
      ...NO_DENY_AND_STOP.map((scenario) => `${scenario}: denyAndStop`),
    ];
    const seen = notApplicable.map((r) => `${r.scenario}: ${/\(capability /.test(r.note) ? "capability " : ""}${absent(r) ?? "?"}`);
    expect(seen.sort()).toEqual(expected.sort());
    expect(rows.filter((r) => r.verdict === "PASS")).toHaveLength(30 - expected.length - failed.length);
    expect(result.code).toBe(failed.length === 0 ? 0 : 1);
    expect(model.requests.some((r) => r.steps !== undefined)).toBe(true);
  }, 620_000);
});
