/** The model loader: reads a model file and builds the model its `kind` names (a turns script, or the checkable model). */
import { readFileSync } from "node:fs";
import { isObject } from "@muse-code/protocol";
import { parseCheckModel } from "./checkModel.js";
import { parseJsonText } from "./jsonSyntax.js";
import { parseTurnsScript, type ScriptedModel } from "./scriptedModel.js";

/**
 * Validates a parsed model file's value and builds its {@link ScriptedModel}, by its `kind`: a
 * value with no `kind` is a turns script (see docs/reference-host.md), and
 * `{"kind": "msp-check"}` is the checkable model, whose turns come from their prompts (see
 * docs/checkable-hosts.md). Throws an `Error` naming the first problem and its JSON path, e.g.
 * `invalid scripted model at $.turns[0].steps[1].txt: unknown key (expected one of reasoning, text, …; did you mean text?)`.
 * Unknown keys are rejected; the top level may carry a `description` string.
 *
 * @example
 * ```ts
 * const model = parseScriptedModel({ turns: [{ steps: [{ text: "hi" }] }] }, "tiny");
 * model.turnAt(5).steps.length; // 1
 * ```
 */
export function parseScriptedModel(value: unknown, name: string): ScriptedModel {
  if (isObject(value) && "kind" in value) return parseCheckModel(value, name);
  return parseTurnsScript(value, name);
}

/**
 * Reads and validates a scripted model file (see docs/reference-host.md for the format). Every
 * error names the file: `path:line:column: invalid JSON: …` for a syntax error,
 * `path: invalid scripted model at $.turns[0]…: …` for a script that is JSON but not a script,
 * and `cannot read scripted model NAME from path: …` when the file cannot be read.
 *
 * @example
 * ```ts
 * const model = loadScriptedModel("models/slow.json", "slow");
 * ```
 */
export function loadScriptedModel(path: string, name: string): ScriptedModel {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`cannot read scripted model ${name} from ${path}: ${(error as Error).message}`, { cause: error });
  }
  const value = parseJsonText(text, path);
  try {
    return parseScriptedModel(value, name);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`, { cause: error });
  }
}
