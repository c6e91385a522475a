/**
 * Stopping a Codex turn for real. Codex 0.169.0 answers `turn/interrupt` and sends `turn/completed
 * interrupted` within milliseconds while the turn's command keeps running (openai/codex#42717): its
 * item never completes and the process outlives the turn. So a stop here is, in order:
 * 1. `turn/interrupt`, then a bounded wait for Codex's own `turn/completed` of that turn;
 * 2. Codex's own listing, `thread/backgroundTerminals/list`, and `…/terminate` of each terminal
 *    (Codex then closes the command's item, with its output); its `osPid` is null in 0.169.0, so
 *    this listing cannot say which processes to wait for;
 * 3. the process tree below the app-server (see ../processTree.ts): SIGTERM each tool group, SIGKILL
 *    after the kill grace, and resolve only when every one of those processes is gone.
 * A process that cannot be confirmed gone rejects with {@link ProcessesSurvivedError}: the turn
 * must then end `failed`, never `cancelled` over a live process.
 */
import type { ServerNotification } from "./generated/ServerNotification.js";
import type { TurnStatus } from "./generated/v2/TurnStatus.js";
import { ProcessTreeWatch, reapProcesses, readProcess, type ProcessInfo, type ReapReport } from "../processTree.js";
import type { CodexAppServer } from "./codexAppServer.js";
import { CodexRpcError, CodexTimeoutError } from "./codexErrors.js";

/** Options of {@link stopCodexTurn}. */
export interface CodexTurnStopOptions {
  threadId: string;
  turnId: string;
  /** The watch that sampled the app-server's tree during the turn (its recorded groups are targets too). */
  watch?: ProcessTreeWatch;
  /** How long Codex gets to send its own terminal after `turn/interrupt`. @unit milliseconds @defaultValue 5000 */
  agentStopGraceMs?: number;
  /** Whether Codex's background terminals are terminated through Codex before the tree is reaped. @defaultValue true */
  terminateBackgroundTerminals?: boolean;
  /** SIGTERM → SIGKILL. @unit milliseconds @defaultValue 2000 */
  killGraceMs?: number;
  /** After SIGKILL, until a survivor is an error. @unit milliseconds @defaultValue 3000 */
  killBoundMs?: number;
}

/** What {@link stopCodexTurn} saw and did. */
export interface CodexTurnStop {
  /** Codex's own terminal for the turn: its status, or `undefined` when none came within the grace. */
  agentStatus: TurnStatus | undefined;
  /** Why no `turn/interrupt` was accepted, when Codex refused it (the turn had ended already). */
  interruptRefused?: string;
  /** Codex did not answer `turn/interrupt` within the grace: it is not stopping the turn itself. */
  interruptUnanswered?: boolean;
  /** The background terminals Codex said it terminated (their item ids). */
  terminatedTerminals: string[];
  /** The processes of the turn that were still live after Codex's part, and what reaping them took. */
  reap: ReapReport;
  /** From `turn/interrupt` to Codex's `turn/completed`. @unit milliseconds */
  interruptToTerminalMs: number | undefined;
  /** From `turn/interrupt` until every process of the turn was gone. @unit milliseconds */
  interruptToGoneMs: number;
}

const isTurnCompleted =
  (turnId: string) =>
  (n: ServerNotification): n is Extract<ServerNotification, { method: "turn/completed" }> =>
    n.method === "turn/completed" && n.params.turn.id === turnId;

/**
 * Interrupts turn `turnId` of `threadId` and resolves only when every process the turn started is
 * gone; each answer Codex owes is awaited at most `agentStopGraceMs`, and a Codex that does not
 * answer `turn/interrupt` in time (`interruptUnanswered`) is asked nothing more. Rejects with `ProcessesSurvivedError` when one survives SIGKILL and the bound, and with the
 * connection's error when the app-server dies meanwhile (its processes are then not reaped here:
 * the caller stops the tree with {@link reapCodexTree}).
 */
export async function stopCodexTurn(server: CodexAppServer, options: CodexTurnStopOptions): Promise<CodexTurnStop> {
  const { threadId, turnId } = options;
  const graceMs = options.agentStopGraceMs ?? 5000;
  const started = Date.now();
  const terminal = server.waitForNotification(isTurnCompleted(turnId), graceMs, `turn/completed for ${turnId}`);
  terminal.catch(() => {}); // awaited below; a rejection before then is not unhandled
  let interruptRefused: string | undefined;
  let interruptUnanswered = false;
  try {
    await server.request("turn/interrupt", { threadId, turnId }, graceMs);
  } catch (error) {
    if (error instanceof CodexTimeoutError) interruptUnanswered = true;
    else if (error instanceof CodexRpcError) interruptRefused = error.rpcMessage;
    else throw error;
  }
  let agentStatus: TurnStatus | undefined;
  let interruptToTerminalMs: number | undefined;
  if (interruptRefused === undefined && !interruptUnanswered) {
    try {
      agentStatus = (await terminal).params.turn.status;
      interruptToTerminalMs = Date.now() - started;
    } catch (error) {
      if (!(error instanceof CodexTimeoutError)) throw error;
    }
  }
  const terminatedTerminals: string[] = [];
  // A Codex that did not answer the interrupt is not asked more: the tree is reaped without it.
  if ((options.terminateBackgroundTerminals ?? true) && !interruptUnanswered) {
    try {
      for (const t of await server.backgroundTerminals(threadId, graceMs)) {
        const answer = await server.request("thread/backgroundTerminals/terminate", { threadId, processId: t.processId }, graceMs);
        if (answer.terminated) terminatedTerminals.push(t.itemId);
      }
    } catch (error) {
      if (!(error instanceof CodexTimeoutError || error instanceof CodexRpcError)) throw error;
    }
  }
  const reap = await reapCodexTree(server, options);
  return {
    agentStatus,
    ...(interruptRefused === undefined ? {} : { interruptRefused }),
    ...(interruptUnanswered ? { interruptUnanswered } : {}),
    terminatedTerminals,
    reap,
    interruptToTerminalMs,
    interruptToGoneMs: Date.now() - started,
  };
}

/**
 * Ends every tool process below the app-server (and of the watch's recorded groups), never the
 * app-server's own group, and resolves when they are gone (see `reapProcesses`).
 */
export async function reapCodexTree(
  server: CodexAppServer,
  options: Pick<CodexTurnStopOptions, "watch" | "killGraceMs" | "killBoundMs"> = {},
): Promise<ReapReport> {
  const watch = options.watch ?? new ProcessTreeWatch(server.pid);
  const targets: ProcessInfo[] = watch.targets();
  const agentGroup = readProcess(server.pid)?.pgid ?? server.pid;
  return reapProcesses(targets, {
    protectGroups: [agentGroup],
    ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
    ...(options.killBoundMs === undefined ? {} : { killBoundMs: options.killBoundMs }),
  });
}
