/** The scripted model: a deterministic stream of reasoning, text and tool calls read from a JSON file. */
import { setTimeout as sleep } from "node:timers/promises";
import { isObject, type ApprovalOffer, type TurnInput, type TurnUsage } from "@muse-code/protocol";

/**
 * A tool call a scripted step asks for. `args` is any JSON object. With `approval: true` the host
 * asks the client (`tool/approve`) before it runs the call, and runs it only on `approve`.
 *
 * @example
 * ```ts
 * const call: ScriptedToolCall = { tool: "shell", args: { command: "rm -rf build" }, approval: true };
 * ```
 */
export interface ScriptedToolCall {
  tool: string;
  args: Record<string, unknown>;
  /** Ask the client before running it (`tool/approve`). @defaultValue false */
  approval?: boolean;
  /**
   * The decisions its question offers (a non-empty subset of `approve`, `approveForSession`,
   * `deny`, `denyAndStop`), to script a narrower offer. @defaultValue all four (without
   * `approveForSession` once the session holds its most grants)
   */
  decisions?: ApprovalOffer[];
}

/**
 * The scripted tool that delegates: `{"tool": "task", "args": {"prompt": "…", "agent":
 * "<name>"}}` runs a child turn, in a child session, playing the script's agent `<name>`.
 */
export const TASK_TOOL = "task";

/** The decisions a scripted call's `decisions` may list. */
const OFFERS: readonly ApprovalOffer[] = ["approve", "approveForSession", "deny", "denyAndStop"];

/**
 * One model step: reasoning, then text, then tool calls whose results feed the next step.
 *
 * @example
 * ```ts
 * const step: ScriptedStep = { text: "hi", chunkSize: 8, chunkDelayMs: 0, toolCalls: [] };
 * ```
 */
export interface ScriptedStep {
  reasoning?: string;
  text?: string;
  /** @unit characters per streamed chunk (default 8) */
  chunkSize: number;
  /** @unit milliseconds before each chunk (default 0) */
  chunkDelayMs: number;
  toolCalls: ScriptedToolCall[];
  /** What the step costs, summed into its turn's `turn/completed.usage` (a step cut short counts in full). */
  usage?: TurnUsage;
  /** When set, the host cancels the turn as this step begins (nothing of the step runs), with a cause of kind `hook` and this reason. */
  stopByHook?: string;
  /**
   * When set, the model errs as this step begins (nothing of the step runs): the turn ends
   * `failed`, its reason `failed: <this text>`, as a model whose provider errs mid-turn ends it.
   */
  fail?: string;
  /**
   * The model takes in the turn's pending steering (`turn/steer`) as this step begins: each
   * steering item completes `completed`, and `{{steering}}` in this step's text reads what the
   * turn has consumed so far (joined with `; `).
   */
  consumesSteering?: boolean;
  /**
   * With `consumesSteering`: when no steering is pending as the step begins, wait up to this long
   * for some (a cancel ends the wait), so a script can have steering arrive before it. At most
   * 600 000. @unit milliseconds @defaultValue 0
   */
  awaitSteeringMs?: number;
}

/**
 * One scripted turn: its steps, played in order.
 *
 * @example
 * ```ts
 * const model = loadScriptedModel(exampleModelPath("hello"), "default");
 * const first: ScriptedTurn = model.turnAt(0);
 * ```
 */
export interface ScriptedTurn {
  steps: ScriptedStep[];
}

/**
 * A loaded scripted model. Turn `i` of a session plays `turns[i % turns.length]`.
 *
 * @example
 * ```ts
 * const model = loadScriptedModel(exampleModelPath("hello"), "hello");
 * model.turnAt(0).steps[0]?.text; // "Hello! I am the reference host's scripted model. …"
 * ```
 */
export interface ScriptedModel {
  readonly name: string;
  readonly turns: readonly ScriptedTurn[];
  /** True when some step declares `usage`: only then do its turns' terminals carry `usage`. */
  readonly declaresUsage?: boolean;
  /** The script's `turnTimeLimitMs`: its turns are stopped by a hook past it (overrides the host's). @unit milliseconds */
  readonly turnTimeLimitMs?: number;
  /**
   * The model's subagents, by name: the turn a `task` call naming one plays in its
   * child session (its script's first turn). Absent when the script has no `agents`.
   */
  readonly agents?: ReadonlyMap<string, ScriptedTurn>;
  /** The turn played for the `index`-th turn of a session (0-based, wraps around). */
  turnAt(index: number): ScriptedTurn;
  /**
   * When present, the turn played for the `index`-th turn given its input, in place of
   * `turnAt`: the checkable model (`{"kind": "msp-check"}`, docs/checkable-hosts.md) reads
   * its turns from the prompt. Throwing fails the turn with the error's message.
   */
  turnFor?(index: number, input: readonly TurnInput[]): ScriptedTurn;
}

/** One chunk a scripted step streams. Tool calls arrive only after all text. */
export type ModelChunk = { kind: "reasoning"; delta: string } | { kind: "text"; delta: string } | { kind: "toolCall"; call: ScriptedToolCall };

const DEFAULT_CHUNK_SIZE = 8;
const DEFAULT_CHUNK_DELAY_MS = 0;
/** The longest a step may wait for steering (`awaitSteeringMs`). @unit milliseconds */
const MAX_AWAIT_STEERING_MS = 600_000;

function fail(where: string, what: string): never {
  throw new Error(`invalid scripted model at ${where}: ${what}`);
}

/** The keys each object of a script may have; any other key is a typo and is rejected. */
const KNOWN_KEYS = {
  script: ["turns", "description", "turnTimeLimitMs", "agents"],
  agent: ["turns", "description"],
  turn: ["steps"],
  step: ["reasoning", "text", "chunkSize", "chunkDelayMs", "toolCalls", "usage", "stopByHook", "fail", "consumesSteering", "awaitSteeringMs"],
  toolCall: ["tool", "args", "approval", "decisions"],
} as const;

/** `where` extended by one key, as a JSON path: `.key`, or `["odd key"]`. */
function pathOf(where: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${where}.${key}` : `${where}[${JSON.stringify(key)}]`;
}

/** Edit distance, to suggest the key a typo meant. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

function rejectUnknownKeys(raw: Record<string, unknown>, known: readonly string[], where: string): void {
  for (const key of Object.keys(raw)) {
    if (known.includes(key)) continue;
    const near = known.filter((k) => distance(key.toLowerCase(), k.toLowerCase()) <= 2).sort((x, y) => distance(key, x) - distance(key, y))[0];
    fail(pathOf(where, key), `unknown key (expected one of ${known.join(", ")}${near === undefined ? "" : `; did you mean ${near}?`})`);
  }
}

function parseStep(raw: unknown, where: string): ScriptedStep {
  if (!isObject(raw)) fail(where, "a step must be an object");
  rejectUnknownKeys(raw, KNOWN_KEYS.step, where);
  const { reasoning, text, chunkSize, chunkDelayMs, toolCalls, usage, stopByHook, consumesSteering, awaitSteeringMs } = raw;
  const failWith = raw["fail"];
  if (reasoning !== undefined && typeof reasoning !== "string") fail(where, "reasoning must be a string");
  if (text !== undefined && typeof text !== "string") fail(where, "text must be a string");
  if (chunkSize !== undefined && !(Number.isInteger(chunkSize) && (chunkSize as number) >= 1)) {
    fail(where, "chunkSize must be an integer >= 1");
  }
  if (chunkDelayMs !== undefined && !(typeof chunkDelayMs === "number" && chunkDelayMs >= 0)) {
    fail(where, "chunkDelayMs must be a number >= 0");
  }
  if (toolCalls !== undefined && !Array.isArray(toolCalls)) fail(where, "toolCalls must be an array");
  const calls = (toolCalls ?? []).map((call: unknown, i: number): ScriptedToolCall => {
    const at = `${where}.toolCalls[${i}]`;
    if (!isObject(call)) fail(at, "a tool call must be an object");
    rejectUnknownKeys(call, KNOWN_KEYS.toolCall, at);
    if (typeof call["tool"] !== "string" || call["tool"] === "") fail(at, "tool must be a non-empty string");
    const args = call["args"] ?? {};
    if (!isObject(args)) fail(at, "args must be an object");
    const approval = call["approval"];
    if (approval !== undefined && typeof approval !== "boolean") fail(`${at}.approval`, "approval must be a boolean");
    const decisions = call["decisions"];
    if (
      decisions !== undefined &&
      !(
        Array.isArray(decisions) &&
        decisions.length > 0 &&
        decisions.every((d) => OFFERS.includes(d as ApprovalOffer)) &&
        new Set(decisions).size === decisions.length
      )
    ) {
      fail(`${at}.decisions`, `decisions must be a non-empty list of distinct ${OFFERS.join(", ")}`);
    }
    const parsed: ScriptedToolCall = approval === true ? { tool: call["tool"], args, approval } : { tool: call["tool"], args };
    if (decisions !== undefined) parsed.decisions = [...(decisions as ApprovalOffer[])];
    return parsed;
  });
  const step: ScriptedStep = {
    chunkSize: (chunkSize as number | undefined) ?? DEFAULT_CHUNK_SIZE,
    chunkDelayMs: (chunkDelayMs as number | undefined) ?? DEFAULT_CHUNK_DELAY_MS,
    toolCalls: calls,
  };
  if (reasoning !== undefined) step.reasoning = reasoning;
  if (text !== undefined) step.text = text;
  if (usage !== undefined) step.usage = parseUsage(usage, `${where}.usage`);
  if (stopByHook !== undefined) {
    if (typeof stopByHook !== "string" || stopByHook.trim() === "") fail(`${where}.stopByHook`, "stopByHook must be a non-empty string");
    step.stopByHook = stopByHook;
  }
  if (failWith !== undefined) {
    if (typeof failWith !== "string" || failWith.trim() === "") fail(`${where}.fail`, "fail must be a non-empty string");
    step.fail = failWith;
  }
  if (consumesSteering !== undefined) {
    if (typeof consumesSteering !== "boolean") fail(`${where}.consumesSteering`, "consumesSteering must be a boolean");
    if (consumesSteering) step.consumesSteering = true;
  }
  if (awaitSteeringMs !== undefined) {
    if (!(Number.isSafeInteger(awaitSteeringMs) && (awaitSteeringMs as number) >= 0 && (awaitSteeringMs as number) <= MAX_AWAIT_STEERING_MS)) {
      fail(`${where}.awaitSteeringMs`, `awaitSteeringMs must be an integer from 0 to ${MAX_AWAIT_STEERING_MS}`);
    }
    if (step.consumesSteering !== true) fail(`${where}.awaitSteeringMs`, "awaitSteeringMs needs consumesSteering: true");
    step.awaitSteeringMs = awaitSteeringMs as number;
  }
  return step;
}

const USAGE_KEYS = ["inputTokens", "outputTokens", "reasoningTokens"] as const;

/** A step's `usage`: each of the three counts a non-negative integer (a missing one is 0). */
function parseUsage(raw: unknown, where: string): TurnUsage {
  if (!isObject(raw)) fail(where, "usage must be an object");
  rejectUnknownKeys(raw, USAGE_KEYS, where);
  const usage: TurnUsage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  for (const key of USAGE_KEYS) {
    const n = raw[key] ?? 0;
    if (!(Number.isSafeInteger(n) && (n as number) >= 0)) fail(pathOf(where, key), `${key} must be a non-negative integer`);
    usage[key] = n as number;
  }
  return usage;
}

/** The usage of the steps a turn ran, summed. */
export function addUsage(sum: TurnUsage, step: TurnUsage | undefined): TurnUsage {
  if (step === undefined) return sum;
  return {
    inputTokens: sum.inputTokens + step.inputTokens,
    outputTokens: sum.outputTokens + step.outputTokens,
    reasoningTokens: sum.reasoningTokens + step.reasoningTokens,
  };
}

/**
 * Validates a parsed script (the JSON value of a model file) and builds a {@link ScriptedModel}.
 * Throws an `Error` naming the first problem and its JSON path, e.g.
 * `invalid scripted model at $.turns[0].steps[1].txt: unknown key (expected one of reasoning, text, …; did you mean text?)`.
 * Unknown keys are rejected; the script's top level may carry a `description` string. (A model
 * file with a `kind` is another model: `parseScriptedModel` in `modelLoader.ts` dispatches on it.)
 */
export function parseTurnsScript(value: unknown, name: string): ScriptedModel {
  if (!isObject(value)) fail("$", "the script must be an object");
  rejectUnknownKeys(value, KNOWN_KEYS.script, "$");
  if (value["description"] !== undefined && typeof value["description"] !== "string") fail("$.description", "description must be a string");
  const limit = value["turnTimeLimitMs"];
  if (limit !== undefined && !(Number.isSafeInteger(limit) && (limit as number) >= 1)) fail("$.turnTimeLimitMs", "turnTimeLimitMs must be a positive integer");
  const turns = parseTurns(value["turns"], "$");
  const agents = parseAgents(value["agents"]);
  checkDelegations(turns, agents, "$");
  for (const [agentName, agentTurns] of agents ?? []) checkDelegations(agentTurns, agents, pathOf("$.agents", agentName));
  const declaresUsage = turns.some((t) => t.steps.some((step) => step.usage !== undefined));
  return {
    name,
    turns,
    ...(declaresUsage ? { declaresUsage } : {}),
    ...(agents === undefined ? {} : { agents: new Map([...agents].map(([n, t]) => [n, t[0] as ScriptedTurn])) }),
    ...(limit === undefined ? {} : { turnTimeLimitMs: limit as number }),
    turnAt(index: number): ScriptedTurn {
      const turn = turns[((index % turns.length) + turns.length) % turns.length];
      if (turn === undefined) throw new Error("unreachable: empty script");
      return turn;
    },
  };
}

/** A script's `turns`: a non-empty array of turns, each a non-empty array of steps. */
function parseTurns(turnsRaw: unknown, where: string): ScriptedTurn[] {
  if (!Array.isArray(turnsRaw) || turnsRaw.length === 0) fail(`${where}.turns`, "turns must be a non-empty array");
  return turnsRaw.map((t: unknown, i: number): ScriptedTurn => {
    const at = `${where}.turns[${i}]`;
    if (!isObject(t)) fail(at, "a turn must be an object");
    rejectUnknownKeys(t, KNOWN_KEYS.turn, at);
    const steps = t["steps"];
    if (!Array.isArray(steps) || steps.length === 0) fail(`${at}.steps`, "steps must be a non-empty array");
    return { steps: steps.map((s: unknown, j: number) => parseStep(s, `${at}.steps[${j}]`)) };
  });
}

/** A script's `agents`: an object of named sub-scripts, each with its own `turns`. */
function parseAgents(raw: unknown): Map<string, ScriptedTurn[]> | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw)) fail("$.agents", "agents must be an object of named scripts");
  const agents = new Map<string, ScriptedTurn[]>();
  for (const [agentName, script] of Object.entries(raw)) {
    const where = pathOf("$.agents", agentName);
    if (agentName === "") fail(where, "an agent's name must be non-empty");
    if (!isObject(script)) fail(where, "an agent must be an object with turns");
    rejectUnknownKeys(script, KNOWN_KEYS.agent, where);
    if (script["description"] !== undefined && typeof script["description"] !== "string") fail(`${where}.description`, "description must be a string");
    agents.set(agentName, parseTurns(script["turns"], where));
  }
  return agents;
}

/** Every `task` call names an agent of the script and carries a string `prompt`. */
function checkDelegations(turns: readonly ScriptedTurn[], agents: ReadonlyMap<string, unknown> | undefined, where: string): void {
  for (const [i, turn] of turns.entries()) {
    for (const [j, step] of turn.steps.entries()) {
      for (const [k, call] of step.toolCalls.entries()) {
        if (call.tool !== TASK_TOOL) continue;
        const at = `${where}.turns[${i}].steps[${j}].toolCalls[${k}].args`;
        const agent = call.args["agent"];
        if (typeof agent !== "string" || agents?.has(agent) !== true) {
          fail(`${at}.agent`, `a task call's agent must name one of the script's agents (${[...(agents?.keys() ?? [])].join(", ") || "none"})`);
        }
        if (typeof call.args["prompt"] !== "string") fail(`${at}.prompt`, "a task call's prompt must be a string");
      }
    }
  }
}

function* chunksOf(text: string, size: number): Generator<string> {
  if (!/[\ud800-\udfff]/.test(text)) {
    // No surrogates: every character is one code unit, so slicing the string is slicing the characters.
    for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
    return;
  }
  const chars = Array.from(text); // never split a surrogate pair
  for (let i = 0; i < chars.length; i += size) yield chars.slice(i, i + size).join("");
}

/**
 * The chunks of one step, in order, with no pauses: reasoning chunks, then text chunks, then its
 * tool calls ({@link streamStep} is the same with each chunk's `chunkDelayMs` before it).
 */
export function* stepChunks(step: ScriptedStep): Generator<ModelChunk> {
  if (step.reasoning !== undefined) for (const delta of chunksOf(step.reasoning, step.chunkSize)) yield { kind: "reasoning", delta };
  if (step.text !== undefined) for (const delta of chunksOf(step.text, step.chunkSize)) yield { kind: "text", delta };
  for (const call of step.toolCalls) yield { kind: "toolCall", call };
}

/**
 * Streams one step: reasoning chunks, then text chunks, then its tool calls. Each reasoning or text
 * chunk waits `chunkDelayMs` first (without a delay, only checks `signal`); the wait rejects as soon
 * as `signal` aborts.
 */
export async function* streamStep(step: ScriptedStep, signal: AbortSignal): AsyncGenerator<ModelChunk> {
  for (const chunk of stepChunks(step)) {
    if (chunk.kind !== "toolCall") {
      if (step.chunkDelayMs > 0) await sleep(step.chunkDelayMs, undefined, { signal });
      else signal.throwIfAborted();
    }
    yield chunk;
  }
}
