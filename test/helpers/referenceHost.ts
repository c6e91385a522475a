/**
 * Test helpers for end-to-end runs: spawn the real reference host with spawnHost, and crash it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnHost, type SpawnedHost } from "../../src/node/index.js";
import { formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, killGroups } from "../../recipes/processTree.js";
import { repoRoot } from "./repoRoot.js";

export { killGroups };
export { until } from "../../recipes/until.js";

export function model(name: string): string {
  return join(repoRoot, "test", "fixtures", "models", name);
}

export interface HostRun {
  host: SpawnedHost;
  /** The wire as transcript lines, client and server, in order. */
  wire: string[];
}

/** A fresh data dir, removed by the returned cleanup. */
export function tempDataDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "muse-e2e-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Spawn `muse-host serve --stdio` with the given model and extra flags, recording the wire. */
export function startHost(modelFile: string, data: string, extra: string[] = [], env?: NodeJS.ProcessEnv): HostRun {
  const wire: string[] = [];
  const host = spawnHost({
    command: process.execPath,
    args: ["--import", "tsx", join(repoRoot, "packages/host/src/serve/main.ts"), "serve", "--stdio", "--script", modelFile, "--data", data, ...extra],
    cwd: repoRoot,
    stderr: "ignore",
    killGraceMs: 1_000,
    defaultTimeoutMs: 15_000,
    ...(env === undefined ? {} : { env }),
    wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
  });
  return { host, wire };
}

/**
 * Simulate a host crash: SIGKILL the host's process group only. Its tools run in process groups
 * of their own and would be orphaned, as in a real crash; they are returned so the caller can
 * clean them up with {@link killGroups} once it has checked what it wanted.
 */
export function crashHost(pid: number): number[] {
  const orphans = descendantsOf(pid);
  process.kill(-pid, "SIGKILL");
  return orphans;
}
