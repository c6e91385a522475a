/**
 * The live arm of the recipe runner: runs a recipe against the reference host
 * (`muse-host serve --stdio`), spawned as a real child process with a scripted model.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { MspClient } from "@muse-code/sdk";
import { exampleModelPath, spawnHost, type ExampleModelName, type SpawnedHost } from "@muse-code/sdk/node";
import { formatTranscriptEntry, recordingChannel } from "@muse-code/sdk/testing";
import { startLiveAgent, type LiveAgent } from "./liveAgent.js";
import { descendantsOf, killGroups } from "./processTree.js";
import { hasLiveArm, type Recipe, type RecipeArm } from "./recipe.js";
import { until } from "./until.js";

/** Whether this checkout has the reference host to run live arms against. */
export function liveAvailable(): boolean {
  return true;
}

/** Resolve once the turn has a tool call running that has printed something. */
function toolRunning(msp: MspClient, turnId: string, timeoutMs: number): Promise<void> {
  const running = () => msp.items.itemsOf(turnId).some((i) => i.kind === "toolCall" && i.status === "inProgress" && i.visibleOutput.length > 0);
  return until(msp, running, `a running tool call with output in turn ${turnId}`, timeoutMs);
}

/** A recipe's model file: `example:NAME` is a model that ships in @muse-code/host, anything else a file under recipes/models/. */
function modelPath(root: string, liveModel: string): string {
  return liveModel.startsWith("example:")
    ? exampleModelPath(liveModel.slice("example:".length) as ExampleModelName)
    : join(root, "recipes", "models", liveModel);
}

/** Build the live environment for one recipe: a data dir, and a host spawned per connect(). */
export async function liveArm(recipe: Recipe, log: (line: string) => void, root: string): Promise<RecipeArm> {
  if (!hasLiveArm(recipe)) throw new Error(`${recipe.name} has no live arm`);
  const agent: LiveAgent | undefined = recipe.liveAgent === undefined ? undefined : await startLiveAgent(recipe, root);
  // What runs the turns: a scripted model, or an agent behind a bridge.
  const turns = recipe.liveModel === undefined ? (agent?.args ?? []) : ["--script", modelPath(root, recipe.liveModel)];
  const data = mkdtempSync(join(tmpdir(), `muse-recipe-${recipe.name}-`));
  const recordDir = process.env["MUSE_RECORD_DIR"];
  const named = Object.entries(recipe.liveModels ?? {});
  const modelArgs = named.flatMap(([name, file]) => ["--model", `${name}=${modelPath(root, file)}`]);
  if (named[0] !== undefined) modelArgs.push("--default-model", named[0][0]);
  const hosts: SpawnedHost[] = [];
  const orphans: number[] = [];
  const spawnOne = (): SpawnedHost => {
    const index = hosts.length;
    const lines: string[] = [];
    const host = spawnHost({
      command: process.execPath,
      args: [
        "--import",
        // Resolved here: an agent's host runs in the agent's working directory, not the repository.
        pathToFileURL(createRequire(join(root, "package.json")).resolve("tsx")).href,
        join(root, "packages", "host", "src", "serve", "main.ts"),
        "serve",
        "--stdio",
        "--data",
        data,
        "--kill-grace-ms",
        "500",
        ...modelArgs,
        ...turns,
      ],
      // Pinned on, over the environment's: an operator's off-switch must not change what a recipe proves.
      env: { ...(agent?.env ?? process.env), MUSE_EXPERIMENTAL_SDK_ENABLED: "1" },
      cwd: agent?.cwd ?? root,
      // MUSE_RECIPE_STDERR=1 shows the host's (and a bridged agent's) stderr, to see why a live arm failed.
      stderr: process.env["MUSE_RECIPE_STDERR"] === "1" ? "inherit" : "ignore",
      killGraceMs: 1_000,
      defaultTimeoutMs: 15_000,
      ...(recordDir === undefined ? {} : { wrapChannel: (c) => recordingChannel(c, (e) => lines.push(formatTranscriptEntry(e))) }),
    });
    if (recordDir !== undefined) {
      void host.closed.then(() => {
        const file = join(recordDir, `${recipe.name}.live${index === 0 ? "" : `.${index + 1}`}.jsonl`);
        writeFileSync(file, lines.map((l) => `${l}\n`).join(""));
      });
    }
    hosts.push(host);
    return host;
  };
  return {
    env: {
      mode: "live",
      connect: async () => spawnOne(),
      async session(msp) {
        const created = await msp.command("session/create", {});
        return created.sessionId;
      },
      midWork: (msp, turnId) => toolRunning(msp, turnId, 15_000),
      crashHost(msp) {
        const host = hosts.find((h) => h === msp);
        if (host === undefined) return Promise.reject(new Error("crashHost: not a host this arm spawned"));
        // A real crash, at the call: the host's group dies, its tools (in groups of their own) are orphaned.
        orphans.push(...descendantsOf(host.pid));
        process.kill(-host.pid, "SIGKILL");
        return host.closed.then(() => undefined);
      },
      restartHost: async () => spawnOne(),
      log,
    },
    finish: async () => {},
    async dispose() {
      await Promise.all(hosts.map((h) => h.close()));
      killGroups(orphans); // leave nothing behind
      rmSync(data, { recursive: true, force: true });
      await agent?.dispose();
    },
  };
}
