/**
 * Scoped approvals on the real host (`muse-host serve --stdio`, a child process, raw NDJSON):
 * `approveForSession` records an exact grant that approves the same call later without a
 * question (naming the grant), also after a restart on the same `--data`; a call with other
 * arguments is asked; `denyAndStop` denies and cancels the turn with cause `user`; an answer the
 * question did not offer is refused and runs nothing. A marker file counts the tool's runs.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { SessionGrants, MAX_GRANTS_PER_SESSION } from "../../packages/host/src/agent/sessionGrants.js";
import { checkTranscript } from "../../src/testing/index.js";
import { useHostProcesses, type HostProcess, type WireMessage } from "./hostProcess.js";

const { start, tempDir } = useHostProcesses("muse-grants-");

/** A call that appends one line to `marker` (so the file counts its runs). */
const appendCall = (marker: string, word: string, extra: Record<string, unknown> = {}) => ({
  tool: "shell",
  args: { command: `echo ${word} >> '${marker}'` },
  approval: true,
  ...extra,
});

/** Writes a model whose turns each run `calls[i]` (one step), then say "Done." */
function grantModel(dir: string, turns: Array<Array<Record<string, unknown>>>): string {
  const model = join(dir, "grants.json");
  writeFileSync(model, JSON.stringify({ turns: turns.map((calls) => ({ steps: [{ text: "Working.", toolCalls: calls }, { text: "Done." }] })) }));
  return model;
}

const runs = (marker: string) => (existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean) : []);

function answer(host: HostProcess, id: unknown, result: unknown): void {
  host.writeLine(JSON.stringify({ jsonrpc: "2.0", id, result }));
}

const terminalOf = (host: HostProcess, turnId: string) =>
  host.waitFor((m) => m.method === "turn/completed" && m.params?.["turnId"] === turnId, 10_000, `turn/completed of ${turnId}`);

const asks = (host: HostProcess, turnId: string) => host.wire.filter((m) => m.method === "tool/approve" && m.params?.["turnId"] === turnId);

const toolItems = (host: HostProcess, turnId: string) =>
  host
    .notifications("item/completed", turnId)
    .map((p) => p["item"] as Record<string, unknown>)
    .filter((i) => i["kind"] === "toolCall");

async function startTurn(host: HostProcess, sessionId: string): Promise<string> {
  const started = await host.request("turn/start", { sessionId, input: [{ type: "text", text: "go" }] });
  return started.result?.["turnId"] as string;
}

const askOf = (host: HostProcess, turnId: string, n = 0): Promise<WireMessage> =>
  host.waitFor(() => asks(host, turnId).length > n, 5000, `tool/approve ${n + 1} of ${turnId}`).then(() => asks(host, turnId)[n]!);

function expectClean(host: HostProcess): void {
  expect(checkTranscript(host.transcript).problems).toEqual([]);
}

describe("scoped approvals on the reference host", () => {
  it("approveForSession records an exact grant: the same call later runs unasked naming it; different args are asked", async () => {
    const dir = tempDir();
    const marker = join(dir, "marker");
    const model = grantModel(dir, [[appendCall(marker, "one")], [appendCall(marker, "one"), appendCall(marker, "two")]]);
    const host = start(["--script", model, "--data", tempDir()]);
    const sessionId = (await host.request("session/create", {})).result?.["sessionId"] as string;

    const first = await startTurn(host, sessionId);
    const ask = await askOf(host, first);
    expect(ask.params?.["decisions"]).toEqual(["approve", "approveForSession", "deny", "denyAndStop"]);
    expect(ask.params?.["grant"]).toEqual({ tool: "shell", args: ask.params?.["args"], match: "exact" });
    answer(host, ask.id, { decision: "approveForSession" });
    expect((await terminalOf(host, first)).params).toMatchObject({ terminal: "completed" });
    const [granted] = toolItems(host, first);
    const grant = granted?.["grant"] as Record<string, unknown>;
    expect(granted).toMatchObject({ status: "completed", approval: "approved" });
    expect(grant).toEqual({ grantId: expect.any(String), tool: "shell", args: ask.params?.["args"], match: "exact" });
    expect(runs(marker)).toEqual(["one"]);

    const second = await startTurn(host, sessionId);
    // The covered call is not asked; the other one (different args) is.
    const other = await askOf(host, second);
    expect(other.params?.["args"]).toBe(JSON.stringify({ command: `echo two >> '${marker}'` }));
    expect(runs(marker)).toEqual(["one", "one"]); // the covered call ran before the question about the other
    answer(host, other.id, { decision: "deny" });
    await terminalOf(host, second);
    expect(asks(host, second)).toHaveLength(1);
    const [covered, asked] = toolItems(host, second);
    expect(covered).toMatchObject({ status: "completed", approval: "approved", grant });
    expect(asked).toMatchObject({ status: "failed", approval: "denied" });
    expect(asked?.["grant"]).toBeUndefined();
    // The covered call went straight to approved: never pending.
    const coveredUpdates = host.wire.filter(
      (m) => m.method === "item/updated" && (m.params?.["item"] as Record<string, unknown>)["itemId"] === covered?.["itemId"],
    );
    expect(coveredUpdates.map((m) => (m.params?.["item"] as Record<string, unknown>)["approval"])).toEqual(["approved"]);
    expect(runs(marker)).toEqual(["one", "one"]);
    expectClean(host);
    await host.stop();
  });

  it("a grant survives a host restart on the same --data", async () => {
    const dir = tempDir();
    const data = tempDir();
    const marker = join(dir, "marker");
    const model = grantModel(dir, [[appendCall(marker, "one")], [appendCall(marker, "one")]]);
    const before = start(["--script", model, "--data", data]);
    const sessionId = (await before.request("session/create", {})).result?.["sessionId"] as string;
    const first = await startTurn(before, sessionId);
    answer(before, (await askOf(before, first)).id, { decision: "approveForSession" });
    await terminalOf(before, first);
    const grant = toolItems(before, first)[0]?.["grant"];
    expect(grant).toMatchObject({ match: "exact" });
    const afterCursor = before.notifications("turn/completed", first)[0]?.["viewCursor"];
    await before.stop();

    const after = start(["--script", model, "--data", data]);
    expect((await after.request("session/resume", { sessionId, afterCursor })).result).toMatchObject({ status: "accepted", replayed: 0 });
    const second = await startTurn(after, sessionId);
    await terminalOf(after, second);
    expect(asks(after, second)).toEqual([]);
    expect(toolItems(after, second)[0]).toMatchObject({ status: "completed", approval: "approved", grant });
    expect(runs(marker)).toEqual(["one", "one"]);
    expectClean(after);
    await after.stop();
  });

  it("denyAndStop denies the call (nothing runs) and cancels the turn with cause user; queued turns are discarded", async () => {
    const dir = tempDir();
    const marker = join(dir, "marker");
    const model = grantModel(dir, [[appendCall(marker, "one"), appendCall(marker, "later")], [appendCall(marker, "queued")]]);
    const host = start(["--script", model, "--data", tempDir()]);
    const sessionId = (await host.request("session/create", {})).result?.["sessionId"] as string;
    const first = await startTurn(host, sessionId);
    const queued = await startTurn(host, sessionId);
    answer(host, (await askOf(host, first)).id, { decision: "denyAndStop", reason: "stop right there" });
    const terminal = await terminalOf(host, first);
    expect(terminal.params).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect((await terminalOf(host, queued)).params).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    const [denied, skipped] = toolItems(host, first);
    expect(denied).toMatchObject({ status: "failed", approval: "denied", error: { message: "stop right there" } });
    expect(skipped).toMatchObject({ status: "cancelled" });
    expect(host.notifications("item/completed", first).some((p) => (p["item"] as Record<string, unknown>)["text"] === "Done.")).toBe(false);
    expect(runs(marker)).toEqual([]);
    expectClean(host);
    await host.stop();
  });

  it("a question always offers a decision: a script offering only approveForSession, with the session's grants full, offers approve and deny", async () => {
    const dir = tempDir();
    const data = tempDir();
    const marker = join(dir, "marker");
    const model = grantModel(dir, [[appendCall(marker, "one", { decisions: ["approveForSession"] })]]);
    const before = start(["--script", model, "--data", data]);
    const sessionId = (await before.request("session/create", {})).result?.["sessionId"] as string;
    await before.stop();
    // The session's log gets MAX_GRANTS_PER_SESSION grants, which the restarted host reads back: its grants are full.
    const grants = Array.from({ length: MAX_GRANTS_PER_SESSION }, (_, i) =>
      JSON.stringify({
        type: "grant",
        at: Date.now(),
        turnId: "01a23400-0000-7000-8000-000000000001",
        itemId: `01a23400-0000-7000-8000-${String(i).padStart(12, "0")}`,
        callId: `call_${i}`,
        grant: {
          grantId: `01a23400-0001-7000-8000-${String(i).padStart(12, "0")}`,
          tool: "shell",
          args: JSON.stringify({ command: `echo ${i}` }),
          match: "exact",
        },
      }),
    );
    appendFileSync(join(data, "sessions", `${sessionId}.jsonl`), `${grants.join("\n")}\n`);

    const after = start(["--script", model, "--data", data]);
    await after.request("session/resume", { sessionId });
    const turnId = await startTurn(after, sessionId);
    const ask = await askOf(after, turnId);
    expect(ask.params?.["decisions"]).toEqual(["approve", "deny"]);
    expect(ask.params?.["grant"]).toBeUndefined();
    answer(after, ask.id, { decision: "approve" });
    expect((await terminalOf(after, turnId)).params).toMatchObject({ terminal: "completed" });
    expect(runs(marker)).toEqual(["one"]);
    await after.stop();
  });

  it("an answer the question did not offer is refused: a deny that says so, nothing runs, no grant", async () => {
    const dir = tempDir();
    const marker = join(dir, "marker");
    const narrow = { decisions: ["approve", "deny"] };
    const model = grantModel(dir, [[appendCall(marker, "one", narrow)], [appendCall(marker, "one")]]);
    const host = start(["--script", model, "--data", tempDir()]);
    const sessionId = (await host.request("session/create", {})).result?.["sessionId"] as string;
    const first = await startTurn(host, sessionId);
    const ask = await askOf(host, first);
    expect(ask.params?.["decisions"]).toEqual(["approve", "deny"]);
    expect(ask.params?.["grant"]).toBeUndefined();
    answer(host, ask.id, { decision: "approveForSession" });
    await terminalOf(host, first);
    const [refused] = toolItems(host, first);
    expect(refused).toMatchObject({ status: "failed", approval: "denied" });
    expect(refused?.["failureReason"]).toMatch(/^denied: result\.decision "approveForSession" was not offered \(approve, deny\)/);
    expect(refused?.["grant"]).toBeUndefined();
    expect(runs(marker)).toEqual([]);
    // No grant was recorded: the same call in the next turn is asked.
    const second = await startTurn(host, sessionId);
    answer(host, (await askOf(host, second)).id, { decision: "deny" });
    await terminalOf(host, second);
    expect(runs(marker)).toEqual([]);
    const { problems } = checkTranscript(host.transcript);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/not offered/);
    await host.stop();
  });
});

describe("SessionGrants and the scripted decisions", () => {
  it("covers exactly the same tool and args, and holds at most MAX_GRANTS_PER_SESSION", () => {
    const grants = new SessionGrants([{ grantId: "g1", tool: "shell", args: '{"command":"ls"}', match: "exact" }]);
    expect(grants.covering("shell", '{"command":"ls"}')?.grantId).toBe("g1");
    expect(grants.covering("shell", '{"command":"ls "}')).toBeUndefined();
    expect(grants.covering("shell", '{ "command":"ls"}')).toBeUndefined();
    expect(grants.covering("other", '{"command":"ls"}')).toBeUndefined();
    for (let i = 0; i < MAX_GRANTS_PER_SESSION + 5; i++) grants.add({ grantId: `g${i + 2}`, tool: "shell", args: String(i), match: "exact" });
    expect(grants.size).toBe(MAX_GRANTS_PER_SESSION);
    expect(grants.full).toBe(true);
  });

  it("a scripted call's decisions must be a non-empty list of distinct offers", () => {
    const turns = (decisions: unknown) => ({ turns: [{ steps: [{ toolCalls: [{ tool: "shell", args: { command: "ls" }, approval: true, decisions }] }] }] });
    expect(parseScriptedModel(turns(["approve", "deny"]), "m").turnAt(0).steps[0]?.toolCalls[0]?.decisions).toEqual(["approve", "deny"]);
    for (const bad of [[], ["cancelled"], ["approve", "approve"], "approve"]) {
      expect(() => parseScriptedModel(turns(bad), "m")).toThrow(/toolCalls\[0\]\.decisions: decisions must be a non-empty list/);
    }
  });
});
