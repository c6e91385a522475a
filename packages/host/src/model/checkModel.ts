/**
 * The checkable model: a model file `{"kind": "msp-check"}` makes a model whose turns are told
 * what to do by their prompt, a JSON directive (docs/checkable-hosts.md). `muse check` drives a
 * host through its conformance scenarios with it.
 */
import { isObject, type TurnInput, type TurnUsage } from "@muse-code/protocol";
import { TASK_TOOL, type ScriptedModel, type ScriptedStep, type ScriptedToolCall, type ScriptedTurn } from "./scriptedModel.js";

/**
 * The `kind` of a model file that loads the checkable model, and the model name `muse check`
 * asks for in `session/create {model}`.
 */
export const CHECK_MODEL_KIND = "msp-check";

/** Characters per streamed chunk when a directive step gives no `chunkSize`. @unit characters */
const DEFAULT_CHUNK_SIZE = 8;
/** Longest tool run a directive may ask for, so a typo cannot tie a host up for hours. @unit milliseconds */
const MAX_TOOL_RUN_MS = 600_000;
/** Shortest output interval of a tool run. @unit milliseconds */
const MIN_OUTPUT_EVERY_MS = 10;

const STEP_KEYS = ["reasoning", "text", "chunkSize", "chunkDelayMs", "tool", "usage", "stopByHook", "delegate", "fail"];
/** Most delegating calls one step makes (a directive is a test's, not a fan-out benchmark). @unit calls */
const MAX_DELEGATES_PER_STEP = 8;
/** Deepest nesting of `delegate` in one directive (the host's own depth bound applies too). @unit levels */
const MAX_DELEGATE_NESTING = 8;
/** The prompt of a delegating call: the child plays the directive its `agent` names. */
const DELEGATE_PROMPT = "msp-check: play the directive this call's agent names";
const USAGE_KEYS = ["inputTokens", "outputTokens", "reasoningTokens"] as const;
const TOOL_KEYS = ["runMs", "outputEveryMs", "approval"];

/** What a turn with no directive streams: how to use the model. */
const HELP_TURN: ScriptedTurn = {
  steps: [
    {
      text: 'This is the msp-check model: send a JSON directive as the prompt, e.g. {"steps":[{"text":"hello"}]} (docs/checkable-hosts.md).',
      chunkSize: 32,
      chunkDelayMs: 0,
      toolCalls: [],
    },
  ],
};

function bad(where: string, what: string): never {
  throw new Error(`invalid msp-check directive at ${where}: ${what}`);
}

function nonNegative(value: unknown, where: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(typeof value === "number" && Number.isFinite(value) && value >= 0)) bad(where, "must be a number >= 0");
  return value;
}

/** The shell command that plays a tool run: one output line every `everyMs`, for about `runMs`. */
function toolRunCommand(runMs: number, everyMs: number): string {
  const lines = Math.max(1, Math.ceil(runMs / everyMs));
  const pause = (everyMs / 1000).toFixed(3);
  return `i=0; while [ "$i" -lt ${lines} ]; do i=$((i+1)); echo "msp-check tool output $i of ${lines}"; sleep ${pause}; done`;
}

function parseTool(raw: unknown, where: string): ScriptedToolCall {
  if (!isObject(raw)) bad(where, "tool must be an object");
  for (const key of Object.keys(raw)) if (!TOOL_KEYS.includes(key)) bad(`${where}.${key}`, `unknown key (expected one of ${TOOL_KEYS.join(", ")})`);
  const runMs = nonNegative(raw["runMs"], `${where}.runMs`);
  if (runMs === undefined || runMs > MAX_TOOL_RUN_MS) bad(`${where}.runMs`, `must be a number from 0 to ${MAX_TOOL_RUN_MS}`);
  const everyMs = nonNegative(raw["outputEveryMs"], `${where}.outputEveryMs`) ?? 100;
  if (everyMs < MIN_OUTPUT_EVERY_MS) bad(`${where}.outputEveryMs`, `must be at least ${MIN_OUTPUT_EVERY_MS}`);
  // As in a scripted model's tool call: a boolean; `true` asks the client (`tool/approve`) before the run.
  const approval = raw["approval"];
  if (approval !== undefined && typeof approval !== "boolean") bad(`${where}.approval`, "approval must be a boolean");
  const call: ScriptedToolCall = { tool: "shell", args: { command: toolRunCommand(runMs, everyMs) } };
  if (approval === true) call.approval = true;
  return call;
}

/** A step's `usage` (MSP 2.1), as in a scripted model: each count a non-negative integer, a missing one 0. */
function parseUsage(raw: unknown, where: string): TurnUsage {
  if (!isObject(raw)) bad(where, "usage must be an object");
  for (const key of Object.keys(raw)) {
    if (!(USAGE_KEYS as readonly string[]).includes(key)) bad(`${where}.${key}`, `unknown key (expected one of ${USAGE_KEYS.join(", ")})`);
  }
  const usage: TurnUsage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  for (const key of USAGE_KEYS) {
    const n = raw[key] ?? 0;
    if (!(Number.isSafeInteger(n) && (n as number) >= 0)) bad(`${where}.${key}`, "must be a non-negative integer");
    usage[key] = n as number;
  }
  return usage;
}

function parseStep(raw: unknown, where: string, nesting: number): ScriptedStep {
  if (!isObject(raw)) bad(where, "a step must be an object");
  for (const key of Object.keys(raw)) if (!STEP_KEYS.includes(key)) bad(`${where}.${key}`, `unknown key (expected one of ${STEP_KEYS.join(", ")})`);
  const { reasoning, text, chunkSize, tool } = raw;
  if (reasoning !== undefined && typeof reasoning !== "string") bad(`${where}.reasoning`, "must be a string");
  if (text !== undefined && typeof text !== "string") bad(`${where}.text`, "must be a string");
  if (chunkSize !== undefined && !(Number.isInteger(chunkSize) && (chunkSize as number) >= 1)) bad(`${where}.chunkSize`, "must be an integer >= 1");
  const step: ScriptedStep = {
    chunkSize: (chunkSize as number | undefined) ?? DEFAULT_CHUNK_SIZE,
    chunkDelayMs: nonNegative(raw["chunkDelayMs"], `${where}.chunkDelayMs`) ?? 0,
    toolCalls: tool === undefined ? [] : [parseTool(tool, `${where}.tool`)],
  };
  // Delegating calls, after the tool call; the step's `task` calls run at once.
  if (raw["delegate"] !== undefined) step.toolCalls.push(...parseDelegates(raw["delegate"], `${where}.delegate`, nesting));
  if (reasoning !== undefined) step.reasoning = reasoning;
  if (text !== undefined) step.text = text;
  // MSP 2.1: what the step costs (summed into the turn's usage), and a policy stop as it begins.
  if (raw["usage"] !== undefined) step.usage = parseUsage(raw["usage"], `${where}.usage`);
  const stopByHook = raw["stopByHook"];
  if (stopByHook !== undefined) {
    if (typeof stopByHook !== "string" || stopByHook.trim() === "") bad(`${where}.stopByHook`, "must be a non-empty string");
    step.stopByHook = stopByHook;
  }
  const fail = raw["fail"];
  if (fail !== undefined) {
    if (typeof fail !== "string" || fail.trim() === "") bad(`${where}.fail`, "must be a non-empty string");
    step.fail = fail;
  }
  return step;
}

/** A step's `delegate`: a non-empty array of directives, each a `task` call whose child turn plays it. */
function parseDelegates(raw: unknown, where: string, nesting: number): ScriptedToolCall[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_DELEGATES_PER_STEP)
    bad(where, `delegate must be an array of 1 to ${MAX_DELEGATES_PER_STEP} directives`);
  if (nesting >= MAX_DELEGATE_NESTING) bad(where, `delegate nests deeper than ${MAX_DELEGATE_NESTING} levels`);
  return raw.map((child: unknown, i: number) => {
    // Checked now, so a bad child directive fails the turn that delegates, naming its path.
    parseDirective(child, `${where}[${i}]`, nesting + 1);
    return { tool: TASK_TOOL, args: { prompt: DELEGATE_PROMPT, agent: JSON.stringify(child) } };
  });
}

/** A directive's value: `{"steps": [...]}`, each step checked. */
function parseDirective(value: unknown, where: string, nesting: number): ScriptedTurn {
  if (!isObject(value)) bad(where, "a directive must be an object");
  for (const key of Object.keys(value)) if (key !== "steps") bad(`${where}.${key}`, "unknown key (expected steps)");
  const steps = value["steps"];
  if (!Array.isArray(steps) || steps.length === 0) bad(`${where}.steps`, "steps must be a non-empty array");
  return { steps: steps.map((step: unknown, i: number) => parseStep(step, `${where}.steps[${i}]`, nesting)) };
}

/**
 * The check model's subagents: every child directive is an agent, named by its JSON
 * text, so a delegating call's `agent` says what its child turn plays. `get` parses the name; a
 * name that is no directive is no agent (the call fails `unknown agent …`). It lists none.
 */
class DirectiveAgents implements ReadonlyMap<string, ScriptedTurn> {
  readonly size = 0;
  get(name: string): ScriptedTurn | undefined {
    try {
      return parseDirective(JSON.parse(name), "$", 1);
    } catch {
      return undefined;
    }
  }
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }
  forEach(): void {}
  *entries(): MapIterator<[string, ScriptedTurn]> {}
  *keys(): MapIterator<string> {}
  *values(): MapIterator<ScriptedTurn> {}
  [Symbol.iterator](): MapIterator<[string, ScriptedTurn]> {
    return this.entries();
  }
}

/**
 * The turn a prompt directs: its text inputs, joined, parsed as a directive
 * `{"steps": [{reasoning?, text?, chunkSize?, chunkDelayMs?, tool?: {runMs, outputEveryMs?, approval?}, usage?, stopByHook?}]}`.
 * A prompt that is not a JSON object gets a short help message; a JSON object that is not a
 * directive throws an `Error` naming the problem and its path (the turn then fails with it).
 */
export function checkTurnOf(input: readonly TurnInput[]): ScriptedTurn {
  const prompt = input.map((part) => part.text).join("");
  let value: unknown;
  try {
    value = JSON.parse(prompt);
  } catch {
    return HELP_TURN;
  }
  if (!isObject(value)) return HELP_TURN;
  return parseDirective(value, "$", 0);
}

/**
 * Builds the checkable model from its file's value `{"kind": "msp-check", "description"?: string}`.
 * Throws an `Error` naming the first problem.
 */
export function parseCheckModel(value: Record<string, unknown>, name: string): ScriptedModel {
  for (const key of Object.keys(value)) {
    if (key !== "kind" && key !== "description")
      throw new Error(`invalid scripted model at $.${key}: unknown key in a ${CHECK_MODEL_KIND} model (expected kind, description)`);
  }
  if (value["kind"] !== CHECK_MODEL_KIND) throw new Error(`invalid scripted model at $.kind: the only kind is ${JSON.stringify(CHECK_MODEL_KIND)}`);
  if (value["description"] !== undefined && typeof value["description"] !== "string")
    throw new Error("invalid scripted model at $.description: description must be a string");
  return {
    name,
    turns: [HELP_TURN],
    turnAt: () => HELP_TURN,
    turnFor: (_index, input) => checkTurnOf(input),
    agents: new DirectiveAgents(),
  };
}
