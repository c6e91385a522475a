/**
 * The live arm's agents: what `muse serve --agent codex` and `--agent acp` need around them to
 * run a recipe on this machine. The agent is the real one (the pinned `@openai/codex` binary, or
 * the pinned `@zed-industries/codex-acp`); its model is the scripted Responses-API server the
 * bridge tests use, on 127.0.0.1, with a CODEX_HOME that keeps the agent off the network.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { makeCodexHome } from "../test/fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer } from "../test/fixtures/codex/responsesServer.js";
import type { Recipe } from "./recipe.js";

/** What a bridged host is started with, and what to release after it. */
export interface LiveAgent {
  /** The `muse serve` arguments that choose the agent (after `serve --stdio --data DIR`). */
  args: string[];
  /** The agent's working directory (its shell calls run here). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  dispose(): Promise<void>;
}

/** The codex-acp binary the pinned `@zed-industries/codex-acp` installs. */
function codexAcpBin(root: string): string {
  const require = createRequire(join(root, "packages", "host", "package.json"));
  return join(dirname(require.resolve("@zed-industries/codex-acp/package.json")), "bin", "codex-acp.js");
}

/** Starts the scripted model and the agent's home for `recipe.liveAgent`. */
export async function startLiveAgent(recipe: Recipe, root: string): Promise<LiveAgent> {
  const spec = recipe.liveAgent;
  if (spec === undefined) throw new Error(`${recipe.name} bridges no agent`);
  const model = await startResponsesServer(execThenMessage(spec.command));
  const home = makeCodexHome({ baseUrl: model.baseUrl });
  const args = spec.agent === "codex" ? ["--agent", "codex"] : ["--agent", "acp", "--", process.execPath, codexAcpBin(root)];
  return {
    args,
    cwd: home.workDir,
    // tsx hands its --tsconfig to children by a relative path, which the agent's directory would break.
    env: { ...home.env, CODEX_HOME: home.codexHome, TSX_TSCONFIG_PATH: join(root, "tsconfig.json") },
    async dispose() {
      await model.close();
      home.remove();
    },
  };
}
