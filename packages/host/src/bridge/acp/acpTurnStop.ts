/**
 * Stopping an ACP prompt turn for real. ACP's `session/cancel` is a notification; the agent answers
 * the turn's `session/prompt` with `stopReason: "cancelled"`, and ACP leaves the rest to the
 * client: codex-acp 0.16.0 answers within milliseconds while the turn's `sleep` runs on and its
 * tool call stays `in_progress` (test/bridge/codexAcpAlone.test.ts). So a stop here is, in order:
 * 1. (the driver has answered every open permission request `cancelled`);
 * 2. `session/cancel`, then a bounded wait for the agent's answer to `session/prompt`;
 * 3. the process tree below the agent (../processTree.ts, ACP has no listing of its own): SIGTERM
 *    each tool group, SIGKILL after the kill grace, and resolve only when every one of them is gone.
 * A process that cannot be confirmed gone rejects with `ProcessesSurvivedError`.
 */
import type { PromptResponse } from "@agentclientprotocol/sdk";
import { ProcessTreeWatch, reapProcesses, readProcess, type ReapReport } from "../processTree.js";

/**
 * What a stop needs of the agent: its pid (the root of its process tree) and `session/cancel`.
 *
 * @example
 * ```ts
 * const stoppable: AcpStoppable = agentProcess; // an AcpAgentProcess
 * ```
 */
export interface AcpStoppable {
  readonly pid: number;
  cancel(sessionId: string): Promise<void>;
}

/**
 * Options of {@link stopAcpTurn}.
 *
 * @example
 * ```ts
 * const options: AcpTurnStopOptions = { sessionId, prompt, watch, agentStopGraceMs: 5000, killGraceMs: 2000 };
 * ```
 */
export interface AcpTurnStopOptions {
  sessionId: string;
  /** The turn's `session/prompt` answer (it rejects when the agent dies). */
  prompt: Promise<PromptResponse>;
  /** The watch that sampled the agent's tree during the turn (its recorded groups are targets too). */
  watch?: ProcessTreeWatch;
  /** How long the agent gets to answer the prompt after `session/cancel`. @unit milliseconds @defaultValue 5000 */
  agentStopGraceMs?: number;
  /** SIGTERM → SIGKILL. @unit milliseconds @defaultValue 2000 */
  killGraceMs?: number;
  /** After SIGKILL, until a survivor is an error. @unit milliseconds @defaultValue 3000 */
  killBoundMs?: number;
}

/**
 * What {@link stopAcpTurn} saw and did.
 *
 * @example
 * ```ts
 * const stop: AcpTurnStop = await stopAcpTurn(agent, { sessionId, prompt });
 * console.log(stop.agentStopReason, stop.cancelToGoneMs);
 * ```
 */
export interface AcpTurnStop {
  /** The agent's answer to the prompt: its stopReason, `undefined` when none came within the grace, or why the prompt failed. */
  agentStopReason: PromptResponse["stopReason"] | undefined;
  /** The agent's whole answer to the prompt, when one came within the grace (its usage, where it sends one). */
  agentResponse?: PromptResponse;
  agentError?: Error;
  /** The processes of the turn still live after the agent's answer, and what reaping them took. */
  reap: ReapReport;
  /** From `session/cancel` to the agent's answer. @unit milliseconds */
  cancelToTerminalMs: number | undefined;
  /** From `session/cancel` until every process of the turn was gone. @unit milliseconds */
  cancelToGoneMs: number;
}

/**
 * Cancels `sessionId`'s prompt turn on `agent` and resolves only when every process the turn
 * started is gone; rejects with `ProcessesSurvivedError` when one survives SIGKILL and the bound.
 *
 * @example
 * ```ts
 * const stop = await stopAcpTurn(agent, { sessionId, prompt, watch, killGraceMs: 2000 });
 * console.log(stop.agentStopReason, stop.reap.terminated);
 * ```
 */
export async function stopAcpTurn(agent: AcpStoppable, options: AcpTurnStopOptions): Promise<AcpTurnStop> {
  const graceMs = options.agentStopGraceMs ?? 5000;
  const started = Date.now();
  // What runs below the agent as the stop begins is on record, even if the agent dies of the cancel (its children then no longer descend from it).
  options.watch?.sample();
  // The grace runs from the cancel's send: a write the agent never reads cannot hold the stop (an unsent cancel ends in the timeout).
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), graceMs)));
  void agent.cancel(options.sessionId).catch(() => {});
  const answered = await Promise.race([
    options.prompt.then(
      (r) => ({ r }),
      (e: unknown) => ({ e: e as Error }),
    ),
    timeout,
  ]);
  clearTimeout(timer);
  const cancelToTerminalMs = answered === "timeout" ? undefined : Date.now() - started;
  const reap = await reapAcpTree(agent, options);
  return {
    agentStopReason: answered !== "timeout" && "r" in answered ? answered.r.stopReason : undefined,
    ...(answered !== "timeout" && "r" in answered ? { agentResponse: answered.r } : {}),
    ...(answered !== "timeout" && "e" in answered ? { agentError: answered.e } : {}),
    reap,
    cancelToTerminalMs,
    cancelToGoneMs: Date.now() - started,
  };
}

/**
 * Ends every tool process below the agent (and of the watch's recorded groups), never the agent's
 * own group, and resolves when they are gone (see `reapProcesses`).
 *
 * @example
 * ```ts
 * const report = await reapAcpTree(agent, { watch });
 * ```
 */
export async function reapAcpTree(
  agent: Pick<AcpStoppable, "pid">,
  options: Pick<AcpTurnStopOptions, "watch" | "killGraceMs" | "killBoundMs"> = {},
): Promise<ReapReport> {
  const watch = options.watch ?? new ProcessTreeWatch(agent.pid);
  const agentGroup = readProcess(agent.pid)?.pgid ?? agent.pid;
  return reapProcesses(watch.targets(), {
    protectGroups: [agentGroup],
    ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
    ...(options.killBoundMs === undefined ? {} : { killBoundMs: options.killBoundMs }),
  });
}
