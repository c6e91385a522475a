/**
 * The model names a host bridged to an ACP agent offers: one, {@link ACP_MODEL_NAME}, a label for
 * `models` and `session/create` (the agent picks its own model from its own configuration).
 */
import type { ScriptedModel, ScriptedTurn } from "../model/scriptedModel.js";

/**
 * The one model a `muse serve --agent acp -- CMD ARGS…` host offers.
 *
 * @example
 * ```ts
 * const session = await client.command("session/create", { model: ACP_MODEL_NAME });
 * ```
 */
export const ACP_MODEL_NAME = "acp";

/**
 * The `models` of a host whose turns an ACP agent runs: {@link ACP_MODEL_NAME} alone, a model with
 * no script (the agent plays every turn; asking it for a scripted turn throws).
 *
 * @example
 * ```ts
 * const host = createHost({ models: acpModels(), defaultModel: ACP_MODEL_NAME, agent: { kind: "acp", command: "codex-acp" } });
 * ```
 */
export function acpModels(): ReadonlyMap<string, ScriptedModel> {
  const noScript = (): ScriptedTurn => {
    throw new Error(`model ${ACP_MODEL_NAME} is played by the ACP agent, not a script`);
  };
  return new Map([[ACP_MODEL_NAME, { name: ACP_MODEL_NAME, turns: [], turnAt: noScript }]]);
}
