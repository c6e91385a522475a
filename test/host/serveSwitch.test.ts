/**
 * MUSE_EXPERIMENTAL_SDK_ENABLED, the off-switch of `muse serve` and `muse-host serve`: unset, empty
 * or on, the host serves; off, it refuses with one line and exit 4; any other value is exit 2 with
 * one line. spawnReferenceHost pins it on. Real processes.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HELP } from "../../packages/host/src/serve/serveArgs.js";
import { BAD_SWITCH_EXIT_CODE, SERVE_SWITCH_VARIABLE, SWITCHED_OFF_EXIT_CODE, serveRefusal } from "../../packages/host/src/serve/serveSwitch.js";
import { spawnReferenceHost } from "../../src/node/index.js";
import { ExitCodes } from "../../packages/host/src/cli/exitCodes.js";
import { useMuseBundles } from "../cli/museProcess.js";
import { repoRoot } from "../helpers/repoRoot.js";

const bundles = useMuseBundles();
const hello = join(repoRoot, "packages/host/models/hello.json");

/** The environment of this process with the switch set to `value` (or removed, for `undefined`). */
function envWith(value: string | undefined): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env[SERVE_SWITCH_VARIABLE];
  return value === undefined ? env : { ...env, [SERVE_SWITCH_VARIABLE]: value };
}

/** The two spellings of the host command: `muse serve` and its alias `muse-host serve`. */
function programs(): Array<[string, string]> {
  return [
    ["muse serve", bundles().muse],
    ["muse-host serve", bundles().host],
  ];
}

/** Run `serve --stdio --script hello` with `env`, stdin closed at once: how it ended. */
function serveAndEnd(program: string, env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [program, "serve", "--stdio", "--script", hello], { cwd: repoRoot, env, encoding: "utf8", input: "", timeout: 15_000 });
}

/** Start `serve --stdio`, ask host/info, close stdin: the answer, the exit code and stderr. */
async function serveOneRequest(program: string, env: NodeJS.ProcessEnv): Promise<{ answer: Record<string, unknown>; code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [program, "serve", "--stdio", "--script", hello], { cwd: repoRoot, env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  try {
    const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
      child.stdout.on("data", (chunk: string) => {
        stdout += chunk;
        const line = stdout.split("\n")[0];
        if (stdout.includes("\n") && line !== undefined) resolve(JSON.parse(line) as Record<string, unknown>);
      });
      child.on("close", () => reject(new Error(`the host exited before answering; stderr: ${stderr}`)));
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "host/info", params: { commandId: "info-1" } })}\n`);
    });
    child.stdin.end();
    return { answer, code: await exited, stderr };
  } finally {
    clearTimeout(timer);
  }
}

describe("MUSE_EXPERIMENTAL_SDK_ENABLED", () => {
  it("unset or on (any case, or empty), muse serve and muse-host serve serve MSP and exit 0", async () => {
    for (const [name, program] of programs()) {
      for (const value of [undefined, "1", "true", "on", "TRUE", "On", ""]) {
        const { answer, code, stderr } = await serveOneRequest(program, envWith(value));
        expect(answer, `${name} with ${String(value)}`).toMatchObject({ id: 1, result: { status: "accepted", name: "muse-host" } });
        expect(code, `${name} with ${String(value)}`).toBe(0);
        expect(stderr).toMatch(/^muse-host: serving on stdio \(data /m);
      }
    }
  }, 60_000);

  it("off (0, false, off, any case) refuses: one line on stderr, nothing on stdout, exit 4", () => {
    for (const [name, program] of programs()) {
      for (const value of ["0", "false", "off", "OFF", "False"]) {
        const run = serveAndEnd(program, envWith(value));
        expect(run.status, `${name} with ${value}`).toBe(4);
        expect(run.stdout).toBe("");
        expect(run.stderr).toBe(`muse-host: muse serve is switched off (${SERVE_SWITCH_VARIABLE}=${value}); unset it or set it to 1 to run the host\n`);
      }
    }
  });

  it("any other value is a clear error with the usage code 2, naming the value and the accepted ones", () => {
    for (const [name, program] of programs()) {
      for (const value of ["yes", "2", " 1", "enabled"]) {
        const run = serveAndEnd(program, envWith(value));
        expect(run.status, `${name} with ${JSON.stringify(value)}`).toBe(2);
        expect(run.stdout).toBe("");
        expect(run.stderr).toBe(`muse-host: ${SERVE_SWITCH_VARIABLE}=${JSON.stringify(value)} is neither on (1, true, on) nor off (0, false, off)\n`);
      }
    }
  });

  it("is read before the flags, and --help answers whatever it says", () => {
    const off = envWith("0");
    const badFlags = spawnSync(process.execPath, [bundles().muse, "serve", "--no-such-flag"], { cwd: repoRoot, env: off, encoding: "utf8", input: "" });
    expect(badFlags.status).toBe(4);
    for (const value of ["0", "junk"]) {
      const help = spawnSync(process.execPath, [bundles().muse, "serve", "--help"], { cwd: repoRoot, env: envWith(value), encoding: "utf8", input: "" });
      expect({ status: help.status, stdout: help.stdout, stderr: help.stderr }).toEqual({ status: 0, stdout: `${HELP}\n`, stderr: "" });
    }
    expect(HELP).toMatch(/^ {2}MUSE_EXPERIMENTAL_SDK_ENABLED {2}the operator's off-switch/m);
  });

  it("its exit codes are muse's: switchedOff 4, usage 2; the reader agrees", () => {
    expect(SWITCHED_OFF_EXIT_CODE).toBe(ExitCodes.switchedOff);
    expect(BAD_SWITCH_EXIT_CODE).toBe(ExitCodes.usage);
    expect(new Set(Object.values(ExitCodes)).size).toBe(Object.values(ExitCodes).length);
    expect(serveRefusal({})).toBeUndefined();
    expect(serveRefusal({ [SERVE_SWITCH_VARIABLE]: "oFf" })?.code).toBe(4);
  });

  it("spawnReferenceHost pins it on: a host it spawns serves with the switch off in the environment", async () => {
    await using host = spawnReferenceHost({ script: hello, env: envWith("0"), stderr: "ignore", defaultTimeoutMs: 15_000 });
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "Hi!" }] });
    expect((await turn.completed).terminal).toBe("completed");
  }, 30_000);
});
