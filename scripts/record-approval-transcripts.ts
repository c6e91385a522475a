/**
 * Records the approval transcripts that no SDK client can produce, from the real reference host,
 * once, by hand (tests never run it; the committed files are fixtures):
 *
 *   npx tsx scripts/record-approval-transcripts.ts [--out DIR] [--no-check]   (default: transcripts/)
 *
 * - `late-approve.jsonl`: a `turn/cancel` while the host asks, and an `approve` that crosses it
 *   (sent before the cancel's answer came back: the user clicked Approve as Stop was pressed
 *   elsewhere), then `host/info`: the host withdrew the question on the cancel, reads the late
 *   answer, runs nothing, and goes on serving. From `muse-host serve --stdio` as a child process.
 * - `resume-while-asking.jsonl` + `.2.jsonl`: the asked connection goes away with the question
 *   open; a second connection resumes the session after the last cursor it saw and is asked
 *   again, approves, and the turn completes. A stdio host has one connection, so this one runs the
 *   host core (`createHost`, the real agent loop and shell tool) in process, with two transports.
 *
 * Both use recipes/models/approve-tool.json. Each recording is checked with checkTranscriptParts
 * before it is written (`--no-check` writes it anyway, to look at a recording the checker refuses).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { uuidv7 } from "../packages/protocol/src/uuidv7.js";
import { createHost } from "../packages/host/src/server/museHost.js";
import type { MessageTransport } from "../packages/host/src/transport/messageTransport.js";
import { loadScriptedModel } from "../packages/host/src/model/modelLoader.js";
import { LineSplitter } from "../packages/protocol/src/lineSplitter.js";
import { checkTranscriptParts, formatTranscriptEntry } from "../src/testing/index.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const model = join(root, "recipes", "models", "approve-tool.json");
type Message = Record<string, unknown> & { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

/** One side of a recorded connection: what it sends and a bounded wait for what it reads. */
class Recorder {
  readonly lines: string[] = [];
  readonly wire: Message[] = [];
  #nextId = 1;
  #waiters = new Set<() => void>();
  constructor(readonly write: (raw: string) => void) {}

  fromServer(raw: string): void {
    this.lines.push(formatTranscriptEntry({ dir: "server", raw }));
    this.wire.push(JSON.parse(raw) as Message);
    for (const w of [...this.#waiters]) w();
  }

  send(message: Record<string, unknown>): void {
    const raw = JSON.stringify(message);
    this.lines.push(formatTranscriptEntry({ dir: "client", raw }));
    this.write(raw);
  }

  /** Sends a command; returns its request id. */
  command(method: string, params: Record<string, unknown>): number {
    const id = this.#nextId++;
    this.send({ jsonrpc: "2.0", id, method, params: { ...params, commandId: uuidv7() } });
    return id;
  }

  async request(method: string, params: Record<string, unknown>): Promise<Message> {
    const id = this.command(method, params);
    return this.waitFor((m) => m.id === id && m.method === undefined, `the answer to ${method}`);
  }

  waitFor(predicate: (m: Message) => boolean, what: string, timeoutMs = 10_000): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.wire.find(predicate);
        if (found === undefined) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }
}

const isAsk = (m: Message) => m.method === "tool/approve";
const terminalOf = (turnId: string) => (m: Message) => m.method === "turn/completed" && m.params?.["turnId"] === turnId;

async function lateApprove(): Promise<string[][]> {
  const data = mkdtempSync(join(tmpdir(), "muse-record-"));
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(root, "packages", "host", "src", "serve", "main.ts"), "serve", "--stdio", "--script", model, "--data", data],
    {
      cwd: root,
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const client = new Recorder((raw) => child.stdin.write(`${raw}\n`));
  const lines = new LineSplitter((raw) => client.fromServer(raw));
  child.stdout.on("data", (chunk: Buffer) => lines.push(chunk));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  try {
    const sessionId = (await client.request("session/create", {})).result?.["sessionId"] as string;
    const turnId = (await client.request("turn/start", { sessionId, input: [{ type: "text", text: "Publish the package" }] })).result?.["turnId"] as string;
    const ask = await client.waitFor(isAsk, "tool/approve");
    const cancel = client.command("turn/cancel", { sessionId, turnId });
    client.send({ jsonrpc: "2.0", id: ask.id, result: { decision: "approve" } }); // crosses the cancel: the host ignores it
    await client.waitFor((m) => m.id === cancel && m.method === undefined, "the cancel's answer");
    await client.waitFor(terminalOf(turnId), "the turn's terminal");
    await client.request("host/info", {});
    await new Promise((r) => setTimeout(r, 300)); // anything the late answer caused would show up here
    return [client.lines];
  } finally {
    child.stdin.end();
    await exited;
    rmSync(data, { recursive: true, force: true });
  }
}

async function resumeWhileAsking(): Promise<string[][]> {
  const data = mkdtempSync(join(tmpdir(), "muse-record-"));
  const host = createHost({ models: new Map([["default", loadScriptedModel(model, "default")]]), defaultModel: "default", dataDir: data });
  const open = () => {
    let deliver: (text: string) => void = () => {};
    const closers: Array<() => void> = [];
    let closed = false;
    const recorder = new Recorder((raw) => deliver(raw));
    const transport: MessageTransport = {
      onMessage: (cb) => (deliver = cb),
      onClose: (cb) => closers.push(cb),
      send: (message) => {
        if (!closed) recorder.fromServer(JSON.stringify(message));
      },
      close: () => {},
    };
    host.connect(transport);
    const close = () => {
      closed = true;
      for (const c of closers) c();
    };
    return { recorder, close };
  };
  try {
    const first = open();
    const sessionId = (await first.recorder.request("session/create", {})).result?.["sessionId"] as string;
    const turnId = (await first.recorder.request("turn/start", { sessionId, input: [{ type: "text", text: "Publish the package" }] })).result?.[
      "turnId"
    ] as string;
    await first.recorder.waitFor(isAsk, "tool/approve");
    first.close(); // the tab is closed with the dialog open
    const lastSeen = first.recorder.wire
      .map((m) => m.params?.["viewCursor"])
      .filter((c): c is string => typeof c === "string")
      .at(-1);
    const second = open();
    await second.recorder.request("session/resume", { sessionId, afterCursor: lastSeen });
    const again = await second.recorder.waitFor(isAsk, "tool/approve on the resuming connection");
    second.recorder.send({ jsonrpc: "2.0", id: again.id, result: { decision: "approve" } });
    await second.recorder.waitFor(terminalOf(turnId), "the turn's terminal");
    second.close();
    return [first.recorder.lines, second.recorder.lines];
  } finally {
    await host.shutdown();
    rmSync(data, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { out: { type: "string", default: join(root, "transcripts") }, "no-check": { type: "boolean", default: false } } });
  const out = values.out;
  const scenarios: Array<[string, () => Promise<string[][]>]> = [
    ["late-approve", lateApprove],
    ["resume-while-asking", resumeWhileAsking],
  ];
  let failed = 0;
  for (const [name, record] of scenarios) {
    const parts = await record();
    const verdicts = checkTranscriptParts(parts);
    const problems = verdicts.flatMap((v, i) => v.problems.map((p) => `part ${i + 1}: ${p}`));
    if (problems.length > 0 && !values["no-check"]) {
      failed += 1;
      console.error(`✗ ${name}:\n  ${problems.join("\n  ")}`);
      continue;
    }
    parts.forEach((lines, i) => writeFileSync(join(out, `${name}${i === 0 ? "" : `.${i + 1}`}.jsonl`), lines.map((l) => `${l}\n`).join("")));
    const note = problems.length > 0 ? ` (written unchecked: ${problems.length} problem(s))` : "";
    console.log(`${problems.length > 0 ? "!" : "✓"} ${name}: ${parts.map((p) => `${p.length} lines`).join(" + ")} → ${out}${note}`);
  }
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
