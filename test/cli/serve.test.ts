/**
 * `muse serve` is the reference host: the `muse` bin (bundled from packages/host/src/cli/main.ts) runs the
 * host's command line, with the same flags, output and exit codes as its alias `muse-host serve`.
 * Real processes.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HELP } from "../../packages/host/src/serve/serveArgs.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const hello = join(repoRoot, "packages/host/models/hello.json");

function run(program: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [program, ...args], { cwd: repoRoot, encoding: "utf8", input: "", timeout: 15_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("muse serve", () => {
  it("--help and `muse help serve` print the host's help, exit 0", () => {
    for (const args of [
      ["serve", "--help"],
      ["serve", "--stdio", "-h"],
      ["help", "serve"],
    ]) {
      expect(run(bundles().muse, args), args.join(" ")).toEqual({ status: 0, stdout: `${HELP}\n`, stderr: "" });
    }
    expect(run(bundles().host, ["serve", "--help"])).toEqual({ status: 0, stdout: `${HELP}\n`, stderr: "" });
  });

  it("a bad command line gets what muse-host serve says, on stderr, and the same exit code", () => {
    for (const args of [
      ["serve", "--stdio", "--script", hello, "--kill-grace", "5"],
      ["serve", "--script", hello],
      ["serve", "--stdio", "--script", join(repoRoot, "no-such-model.json")],
    ]) {
      const viaMuse = run(bundles().muse, args);
      expect(viaMuse.status, args.join(" ")).toBe(2);
      expect(viaMuse.stderr).toMatch(/^muse-host: /);
      expect(viaMuse).toEqual(run(bundles().host, args));
    }
  });

  it("--stdio serves MSP on stdin/stdout and exits 0 when stdin ends", async () => {
    const child = spawn(process.execPath, [bundles().muse, "serve", "--stdio", "--script", hello], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
      child.stdout.on("data", (chunk: string) => {
        stdout += chunk;
        const line = stdout.split("\n")[0];
        if (stdout.includes("\n") && line !== undefined) resolve(JSON.parse(line) as Record<string, unknown>);
      });
      child.on("close", () => reject(new Error(`muse serve exited before answering; stderr: ${stderr}`)));
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "host/info", params: { commandId: "info-1" } })}\n`);
    });
    expect(answer).toMatchObject({ id: 1, result: { commandId: "info-1", status: "accepted", name: "muse-host", models: [{ id: "default" }] } });
    child.stdin.end();
    const code = await exited;
    clearTimeout(timer);
    expect(code).toBe(0);
    expect(stderr).toMatch(/^muse-host: serving on stdio \(data /m);
    expect(stderr).toMatch(/^muse-host: stdin closed: cancelling running turns and draining tools$/m);
  });

  it("is listed by muse --help, and must be the first word", () => {
    const help = run(bundles().muse, ["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^ {2}serve {18}run the reference host \(also muse-host serve\)/m);
    expect(help.stdout).toMatch(
      /^ {7}muse serve {2}\(--stdio \| --ws \[ADDR:\]PORT \| both\) \(--script PATH \| --agent codex \| --agent acp -- CMD ARGS…\) …$/m,
    );
    const misplaced = run(bundles().muse, ["--json", "serve", "--stdio"]);
    expect(misplaced.status).toBe(2);
    expect(misplaced.stderr).toMatch(/^muse: serve must be the first word: muse serve --stdio …/);
  });
});
