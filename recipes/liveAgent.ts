/**
 * The live arm's agents: what `muse serve --agent codex` (or `--agent acp -- codex-acp`) needs
 * around it to run a recipe on this machine. The agent is the real one (the pinned `@openai/codex`
 * binary, or the pinned `@zed-industries/codex-acp` one); its model is the
 * scripted Responses-API server the bridge tests use, on 127.0.0.1, with a CODEX_HOME that keeps
 * the agent off the network.
 */
import { join } from "node:path";
import { codexAcpBinary } from "../test/fixtures/acp/acpBridgedHost.js";
import { codexAcpHome } from "../test/fixtures/acp/codexAcpHome.js";
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

/** Starts the scripted model and the agent's home for `recipe.liveAgent`. */
export async function startLiveAgent(recipe: Recipe, root: string): Promise<LiveAgent> {
  const spec = recipe.liveAgent;
  if (spec === undefined) throw new Error(`${recipe.name} bridges no agent`);
  const model = await startResponsesServer(execThenMessage(spec.command));
  const home = makeCodexHome({ baseUrl: model.baseUrl });
  return {
    // The ACP agent is codex-acp, Codex behind ACP, on the same model and home.
    args: spec.agent === "acp" ? ["--agent", "acp", "--", codexAcpBinary()] : ["--agent", "codex"],
    cwd: home.workDir,
    // tsx hands its --tsconfig to children by a relative path, which the agent's directory would break.
    env: { ...(spec.agent === "acp" ? codexAcpHome(home) : home.env), CODEX_HOME: home.codexHome, TSX_TSCONFIG_PATH: join(root, "tsconfig.json") },
    async dispose() {
      await model.close();
      home.remove();
    },
  };
}
