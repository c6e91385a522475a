/**
 * The model names a host bridged to Codex offers: one, {@link CODEX_MODEL_NAME}, a label for
 * `models` and `session/create` (Codex picks its own model from its config), and where Codex's
 * home is by default.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { ScriptedModel, ScriptedTurn } from "../model/scriptedModel.js";

/**
 * The one model a `muse serve --agent codex` host offers.
 *
 * @example
 * ```ts
 * const session = await client.command("session/create", { model: CODEX_MODEL_NAME });
 * ```
 */
export const CODEX_MODEL_NAME = "codex";

/**
 * The `models` of a host whose turns Codex runs: {@link CODEX_MODEL_NAME} alone, a model with no
 * script (the agent plays every turn; asking it for a scripted turn throws).
 *
 * @example
 * ```ts
 * const host = createHost({ models: codexModels(), defaultModel: CODEX_MODEL_NAME, agent: { kind: "codex" } });
 * ```
 */
export function codexModels(): ReadonlyMap<string, ScriptedModel> {
  const noScript = (): ScriptedTurn => {
    throw new Error(`model ${CODEX_MODEL_NAME} is played by the Codex agent, not a script`);
  };
  return new Map([[CODEX_MODEL_NAME, { name: CODEX_MODEL_NAME, turns: [], turnAt: noScript }]]);
}

/** Codex's home when none is given: `$CODEX_HOME`, else `~/.codex`, as Codex itself looks. */
export function defaultCodexHome(env: NodeJS.ProcessEnv): string {
  const given = env["CODEX_HOME"];
  return given !== undefined && given !== "" ? given : join(homedir(), ".codex");
}
