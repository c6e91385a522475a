/**
 * `muse run` and `muse info` as real processes against the real reference host (and a tiny
 * scripted host for the failures the reference host cannot be made to produce): plain output when
 * stdout is not a terminal, --json, every exit code, and --record's transcript, which
 * checkTranscript accepts and CannedHost replays.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CloseInfo } from "../../src/index.js";
import { CannedHost, checkTranscript } from "../../src/testing/index.js";
import type { OpenedHost } from "../../packages/host/src/cli/openedHost.js";
import { runTurnCommand } from "../../packages/host/src/cli/runCommand.js";
import { Screen } from "../../packages/host/src/cli/screen.js";
import { TextView } from "../../packages/host/src/cli/textView.js";
import { styles } from "../../packages/host/src/cli/style.js";
import { waitGone } from "../helpers/processGone.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { DEMO_TURN_LINES } from "./demoTurn.js";
import { jsonLines } from "./jsonLines.js";
import { hostCommand, modelPath, runMuse, startMuse, tempDir, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const demoHost = () => hostCommand(bundles(), `--script ${modelPath("cli-demo")}`);
const scriptedHost = (mode: string) => `${JSON.stringify(process.execPath)} ${JSON.stringify(join(repoRoot, "test/cli/fixtures/scriptedHost.mjs"))} ${mode}`;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** The demo model's turn as plain lines (ids and the duration normalised). */
const DEMO_LINES = ["session <id> (model default)", ...DEMO_TURN_LINES, "turn completed: completed after <s> s"];

const normalise = (text: string) => text.replace(UUID, "<id>").replace(/after \d+\.\d s/g, "after <s> s");

describe("muse run", () => {
  it("streams a turn as plain lines when stdout is not a terminal, and exits 0", async () => {
    const result = await runMuse(bundles(), ["run", "check the build", "--spawn", demoHost()]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(normalise(result.stdout).split("\n")).toEqual([...DEMO_LINES, ""]);
    expect(result.stdout).not.toContain("\u001b"); // no escape sequences in a pipe
  });

  it("prints a policy stop's cause and the turn's usage on the terminal line (MSP 2.1)", async () => {
    const model = JSON.stringify(join(repoRoot, "test/fixtures/models/stop-by-hook.json"));
    const result = await runMuse(bundles(), ["run", "go", "--spawn", hostCommand(bundles(), `--script ${model}`)]);
    const lines = normalise(result.stdout).trimEnd().split("\n");
    expect(lines.at(-1)).toBe(
      "turn cancelled: stopped by policy: budget hook: over the daily spend (cancelled at step boundary) after <s> s; tokens 7 in, 3 out, 0 reasoning",
    );
    expect(result.code).toBe(130);
  });

  it("--json prints one event a line: the session, every notification of the turn in wire order, the exit", async () => {
    const result = await runMuse(bundles(), ["run", "check the build", "--json", "--spawn", demoHost()]);
    expect(result.code).toBe(0);
    const events = jsonLines(result.stdout);
    expect(events[0]).toMatchObject({ type: "session", model: "default" });
    expect(events.at(-1)).toEqual({ type: "exit", code: 0 });
    const notifications = events.slice(1, -1);
    expect(notifications.every((e) => e["type"] === "notification")).toBe(true);
    expect(notifications[0]).toMatchObject({ method: "turn/started" });
    expect(notifications.at(-2)).toMatchObject({ method: "item/completed", params: { item: { kind: "message", text: "The build is fine." } } });
    expect(notifications.at(-1)).toMatchObject({ method: "turn/completed", params: { terminal: "completed", reason: "completed" } });
    const cursors = notifications.map((e) =>
      Number(
        String((e["params"] as { viewCursor: string }).viewCursor)
          .split(":")
          .at(-1),
      ),
    );
    expect(cursors).toEqual(cursors.map((_, i) => i + 1));
  });

  it("--record over Content-Length framing writes one message a line, a transcript checkTranscript accepts", async () => {
    const temp = tempDir("muse-record-cl-");
    try {
      const file = join(temp.dir, "run.jsonl");
      const result = await runMuse(bundles(), [
        "run",
        "hi",
        "--framing",
        "content-length",
        "--record",
        file,
        "--spawn",
        `${scriptedHost("complete")} content-length`,
      ]);
      expect([result.code, result.stderr]).toEqual([0, ""]);
      const transcript = readFileSync(file, "utf8");
      expect(checkTranscript(transcript)).toEqual({ ok: true, problems: [] });
      const raws = jsonLines<{ dir: string; raw: string }>(transcript).map((line) => line.raw);
      // Each line is one JSON-RPC message, never a header or two messages (either would not parse).
      expect(raws.map((raw) => (JSON.parse(raw) as { jsonrpc?: string }).jsonrpc)).toEqual(raws.map(() => "2.0"));
      expect(raws.some((raw) => /^Content-Length:/im.test(raw) || raw.includes("\r\n\r\n"))).toBe(false);
      expect(raws.some((raw) => raw.includes("Framed by Content-Length."))).toBe(true);
    } finally {
      temp.remove();
    }
  });

  it("exits 1 on a failed terminal, printing it with its reason", async () => {
    const result = await runMuse(bundles(), ["run", "hi", "--spawn", scriptedHost("fail")]);
    expect(result.code).toBe(1);
    expect(normalise(result.stdout)).toBe("session <id> (model default)\nturn failed: the model is unavailable after <s> s\n");
  });

  it("--framing content-length speaks Content-Length framing to the host", async () => {
    const result = await runMuse(bundles(), ["run", "hi", "--framing", "content-length", "--spawn", `${scriptedHost("complete")} content-length`]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(normalise(result.stdout)).toBe("session <id> (model default)\nFramed by Content-Length.\nturn completed: completed after <s> s\n");
  });

  it("exits 1 with the host's reason when it refuses a command (an unknown model)", async () => {
    const result = await runMuse(bundles(), ["run", "hi", "--model", "nope", "--spawn", demoHost()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("muse: session/create rejected: unknown_model\n");
  });

  it("exits 3 when the host goes away mid-turn, naming how it ended and its last stderr lines", async () => {
    const result = await runMuse(bundles(), ["run", "hi", "--spawn", scriptedHost("vanish")]);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe("muse: connection lost: the host exited with code 7\nmuse:   host: vanishing\n");
    const json = await runMuse(bundles(), ["run", "hi", "--json", "--spawn", scriptedHost("vanish")]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout.trimEnd().split("\n").at(-1) as string)).toEqual({
      type: "exit",
      code: 3,
      why: "connection lost: the host exited with code 7",
    });
  });

  it("refuses a host that speaks another major version of MSP (exit 1)", async () => {
    const result = await runMuse(bundles(), ["run", "hi", "--spawn", scriptedHost("msp1")]);
    expect([result.code, result.stdout, result.stderr]).toEqual([1, "", "muse: the host speaks MSP 1.0; muse speaks MSP 2.1\n"]);
  });

  it("exits 3 when the host command cannot start", async () => {
    const result = await runMuse(bundles(), ["info", "--spawn", "/no/such/host serve"]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^muse: connection lost: could not start \/no\/such\/host: spawn \/no\/such\/host ENOENT\n$/);
  });

  it("exits 1 when the --record file cannot be created, before any host starts", async () => {
    const result = await runMuse(bundles(), ["run", "hi", "--record", "/no/such/dir/run.jsonl", "--spawn", demoHost()]);
    expect([result.code, result.stdout, result.stderr]).toEqual([1, "", "muse: cannot create --record /no/such/dir/run.jsonl: ENOENT\n"]);
  });

  it("exits 2 with one line and the synopsis on a bad command line; --help and --version exit 0", async () => {
    const bad = await runMuse(bundles(), ["run", "hi"]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr.split("\n")[0]).toBe('muse: no host: give --spawn "CMD ARGS…" or --ws URL');
    expect(bad.stderr).toContain('usage: muse run "PROMPT"');
    const help = await runMuse(bundles(), ["--help"]);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining("Ctrl-C is Stop") as unknown]);
    const runHelp = await runMuse(bundles(), ["run", "--help"]);
    expect(runHelp.stdout).toContain("A second Ctrl-C closes the connection at once");
    const check = await runMuse(bundles(), ["check", "--json", ...["--spawn", "x"]]);
    expect([check.code, check.stderr.split("\n")[0]]).toEqual([2, "muse: muse check does not take --json"]);
    const version = await runMuse(bundles(), ["--version"]);
    expect(version.stdout).toBe(`${(JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version}\n`);
  });

  it("a stop that loses the race: the turn's own terminal (completed) decides, not the key press: exit 0", async () => {
    const muse = startMuse(bundles(), ["run", "hi", "--spawn", scriptedHost("race")]);
    await muse.waitFor((out) => out.includes("(model default)\n"));
    muse.child.kill("SIGINT");
    expect((await muse.result).code).toBe(0);
    expect(normalise(muse.output())).toBe(
      [
        "session <id> (model default)",
        "stopping…",
        "turn completed: completed after <s> s",
        "the turn had already ended when the stop reached the host",
        "",
      ].join("\n"),
    );
  });

  it("SIGTERM (or SIGHUP) closes at once like a second Ctrl-C: the host and its stubborn tool are killed, exit 130", async () => {
    const muse = startMuse(bundles(), [
      "run",
      "start the job",
      "--spawn",
      hostCommand(bundles(), `--kill-grace-ms 20000 --script ${modelPath("cli-stubborn")}`),
    ]);
    await muse.waitFor((out) => /tick 2\b/.test(out));
    const pid = Number(/job pid (\d+)/.exec(muse.output())?.[1]);
    const signalled = Date.now();
    muse.child.kill("SIGTERM");
    expect((await muse.result).code).toBe(130);
    expect(Date.now() - signalled).toBeLessThan(3_000);
    expect(muse.output()).toContain("closing the connection without waiting for the terminal");
    expect(await waitGone([pid], 3_000)).toBe(true);
  });

  it("--record writes the wire as a transcript that checkTranscript accepts and CannedHost replays to the same screen", async () => {
    const temp = tempDir("muse-record-");
    try {
      const file = join(temp.dir, "run.jsonl");
      const result = await runMuse(bundles(), ["run", "check the build", "--record", file, "--spawn", demoHost()]);
      expect(result.code).toBe(0);
      const transcript = readFileSync(file, "utf8");
      expect(checkTranscript(transcript)).toEqual({ ok: true, problems: [] });
      const methods = jsonLines<{ raw: string }>(transcript)
        .map((line) => JSON.parse(line.raw) as { method?: string })
        .filter((m) => m.method !== undefined && !m.method.includes("/started") && !m.method.startsWith("item/"));
      expect(methods.map((m) => m.method)).toEqual(["host/info", "session/create", "turn/start", "turn/completed"]);

      // The same command, driven against the canned host replaying the recording, shows the same screen.
      const canned = CannedHost.fromLines(transcript);
      const client = canned.connect();
      let shown = "";
      const host: OpenedHost = {
        client,
        lost: new Promise<CloseInfo>(() => {}),
        stderrTail: () => [],
        close: async () => void (await client.close()),
        kill: async () => void (await client.close()),
      };
      const view = new TextView(new Screen({ write: (text: string) => (shown += text) }, { progress: false }), styles(false), { showTurnIds: false });
      const interrupts = { on: () => () => {} };
      const code = await runTurnCommand(
        { host, view, interrupts, err: (line) => (shown += `err: ${line}\n`), out: () => {}, holdQuestions: () => () => {} },
        { prompt: "check the build", keepInbox: false },
      );
      await client.close();
      await canned.done();
      expect(code).toBe(0);
      expect(shown).toBe(result.stdout);
    } finally {
      temp.remove();
    }
  });

  it("muse info prints the host's name, version, protocol version, fingerprint, capabilities and models", async () => {
    const result = await runMuse(bundles(), ["info", "--spawn", demoHost()]);
    expect(result.code).toBe(0);
    expect(result.stdout.replace(/sha256:[0-9a-f]{64}/, "sha256:<hex>")).toBe(
      [
        "name              muse-host",
        "version           0.1.0",
        "protocol version  2.1",
        "fingerprint       sha256:<hex>",
        "capabilities      keepInbox, resume, steering, scopedApprovals, usage, turnTimeLimit, subagents, policyHooks",
        "models            default",
        "",
      ].join("\n"),
    );
    const shown = await runMuse(bundles(), ["info", "--host-stderr", "--spawn", demoHost()]);
    expect(shown.stdout).toBe(result.stdout.replace(/sha256:[0-9a-f]{64}/, /sha256:[0-9a-f]{64}/.exec(shown.stdout)?.[0] ?? ""));
    expect(shown.stderr).toMatch(/^muse-host: serving on stdio/m); // the host's own log, passed through
    expect(result.stderr).toBe(""); // kept back without --host-stderr
    const json = await runMuse(bundles(), ["info", "--json", "--spawn", demoHost()]);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: "accepted", name: "muse-host", protocolVersion: "2.1", models: [{ id: "default" }] });
  });
});
