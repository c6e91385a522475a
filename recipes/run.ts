/**
 * The recipe runner: `npm run recipes [-- --only a,b] [--list] [--live] [--canned]`.
 * Runs each recipe's canned arm (and live arm, where it has one) with its own timeout,
 * prints one line per run, and ends with `N passed, N failed`.
 */
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { MspClient } from "@muse-code/sdk";
import { CannedHost, readTranscript } from "@muse-code/sdk/testing";
import { recipes } from "./index.js";
import { hasLiveArm, type Recipe, type RecipeArm, type RecipeEnv, type RecipeMode } from "./recipe.js";
import { liveArm, liveAvailable } from "./live.js";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The canned arm: every connect() replays the recipe's transcript (one host per connection). */
function cannedEnv(recipe: Recipe, log: (line: string) => void): RecipeArm {
  const hosts: CannedHost[] = [];
  const path = `${root}transcripts/${recipe.transcript}`;
  const transcriptFile = (n: number) => (n === 0 ? path : path.replace(/\.jsonl$/, `.${n + 1}.jsonl`));
  const open = (): MspClient => {
    const host = CannedHost.fromFile(transcriptFile(hosts.length), { hangUpAtEnd: recipe.cannedCrash === true && hosts.length === 0 });
    hosts.push(host);
    return host.connect({ defaultTimeoutMs: 10_000 });
  };
  const env: RecipeEnv = {
    mode: "canned",
    connect: async () => open(),
    async session(msp) {
      const path = transcriptFile(Math.max(0, hosts.length - 1));
      // A transcript recorded from a live host starts with the session/create the live arm sent.
      const first = readTranscript(path).find((line) => line.dir === "client");
      if (first?.message["method"] === "session/create") return (await msp.command("session/create", {})).sessionId;
      return sessionOfTranscript(path);
    },
    midWork: async () => {},
    async crashHost(msp) {
      // The transcript ends with the host's last words; the connection then drops.
      await msp.closed;
    },
    restartHost: async () => open(),
    log,
  };
  return {
    env,
    async finish() {
      for (const host of hosts) await host.done({ timeoutMs: 2_000 });
    },
  };
}

function sessionOfTranscript(path: string): string {
  for (const line of readTranscript(path)) {
    const params = line.message["params"] as Record<string, unknown> | undefined;
    const result = line.message["result"] as Record<string, unknown> | undefined;
    const sessionId = params?.["sessionId"] ?? result?.["sessionId"];
    if (typeof sessionId === "string") return sessionId;
  }
  throw new Error(`${path}: no sessionId in the transcript`);
}

async function runOne(recipe: Recipe, mode: RecipeMode): Promise<{ ok: boolean; ms: number; lines: string[]; error?: unknown }> {
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const started = performance.now();
  const arm = mode === "canned" ? cannedEnv(recipe, log) : await liveArm(recipe, log, root);
  const timeoutMs = recipe.timeoutMs ?? 20_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        await recipe.run(arm.env);
        await arm.finish();
      })(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms (a hang counts as a failure)`)), timeoutMs);
      }),
    ]);
    return { ok: true, ms: performance.now() - started, lines };
  } catch (error) {
    return { ok: false, ms: performance.now() - started, lines, error };
  } finally {
    clearTimeout(timer);
    await arm.dispose?.();
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      list: { type: "boolean", default: false },
      live: { type: "boolean", default: false },
      canned: { type: "boolean", default: false },
      record: { type: "string" },
    },
  });
  const only = values.only
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only?.filter((name) => !recipes.some((r) => r.name === name)) ?? [];
  if (unknown.length > 0) {
    console.error(`unknown recipe(s): ${unknown.join(", ")}. Known: ${recipes.map((r) => r.name).join(", ")}`);
    return 2;
  }
  const chosen = recipes.filter((r) => only === undefined || only.includes(r.name));
  if (values.list) {
    for (const r of recipes) console.log(`${r.name.padEnd(20)} ${hasLiveArm(r) ? "canned+live" : "canned     "}  ${r.summary}`);
    return 0;
  }
  const modes: RecipeMode[] = values.live ? ["live"] : values.canned ? ["canned"] : ["canned", "live"];
  if (values.record !== undefined) process.env["MUSE_RECORD_DIR"] = values.record;
  let passed = 0;
  let failed = 0;
  for (const recipe of chosen) {
    for (const mode of modes) {
      if (mode === "live" && (!hasLiveArm(recipe) || !liveAvailable())) continue;
      if (values.record !== undefined) mkdirSync(values.record, { recursive: true });
      const result = await runOne(recipe, mode);
      const label = `${recipe.name} (${mode})`;
      if (result.ok) {
        passed += 1;
        console.log(`✓ ${label.padEnd(34)} ${result.ms.toFixed(0).padStart(6)} ms`);
      } else {
        failed += 1;
        console.log(`✗ ${label.padEnd(34)} ${result.ms.toFixed(0).padStart(6)} ms`);
        console.log(
          `    ${String(result.error instanceof Error ? (result.error.stack ?? result.error.message) : result.error)
            .split("\n")
            .join("\n    ")}`,
        );
      }
      for (const line of result.lines) console.log(`    ${line}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

process.exitCode = await main();
