/** What a session agent is given ({@link SessionAgentOptions}) and what it answers of its turns and steers. */
import type { ApprovalGrant, NotificationMethod, ToolApproveParams, TurnCompletedParams, TurnInput } from "@muse-code/protocol";
import type { ApprovalAnswer } from "../server/approvalGate.js";
import type { ScriptedModel } from "../model/scriptedModel.js";
import type { SessionLog } from "../log/sessionLog.js";
import type { HostOrder } from "../log/hostOrder.js";
import type { ShellOptions } from "../tools/shellTool.js";
import type { ChildTurnSpec, Delegate } from "./delegation.js";
import type { TurnDriver } from "./turnDriver.js";
import type { CarriedSteer, SteerRefusal } from "./steeringInbox.js";

/**
 * What {@link SessionAgent.steer} did: accepted the input (or had accepted this steerId before),
 * or refused it: the turn has ended (`terminal`), is not running or is being cancelled
 * (`notRunning`), the input is over the caps (`full`), or the session's turn driver takes no
 * steering (`unsupported`, with its reason).
 *
 * @example
 * ```ts
 * agent.steer(turnId, steerId, [{ type: "text", text: "use pnpm" }], (outcome: SteerOutcome) => {
 *   if (outcome.kind === "full") console.error(outcome.refusal.message);
 * });
 * ```
 */
export type SteerOutcome =
  | { kind: "accepted" }
  | { kind: "terminal"; params: TurnCompletedParams }
  | { kind: "notRunning"; cancelling: boolean; /** A bridged agent refused the input: its words. */ agentRefusal?: string }
  | { kind: "full"; refusal: SteerRefusal }
  | { kind: "unsupported"; message: string };

/**
 * What a session agent knows about one of its turns.
 *
 * @example
 * ```ts
 * function showTurn(agent: SessionAgent, turnId: string): void {
 *   const state: TurnState | undefined = agent.turnState(turnId);
 *   if (state?.state === "terminal") console.log(state.params.terminal);
 * }
 * ```
 */
export type TurnState = { state: "running" } | { state: "queued" } | { state: "terminal"; params: TurnCompletedParams };

/**
 * Everything a {@link SessionAgent} needs.
 *
 * @example
 * ```ts
 * const options: SessionAgentOptions = {
 *   sessionId,
 *   log: SessionLog.open(sessionLogPath("/var/muse", sessionId)),
 *   models: new Map([["default", loadScriptedModel("models/hello.json", "default")]]),
 *   modelName: "default",
 *   publish: (method, params) => console.log(method, params),
 * };
 * ```
 */
export interface SessionAgentOptions {
  sessionId: string;
  log: SessionLog;
  models: ReadonlyMap<string, ScriptedModel>;
  modelName: string;
  /** The last cursor sequence already used (0 for a new session). */
  lastCursor?: number;
  /** Turns already started in earlier runs (picks the next script turn). */
  startedTurns?: number;
  /** Terminals of turns completed in earlier runs (the logged params, with their cursors). */
  terminals?: Map<string, TurnCompletedParams>;
  /** Every turn accepted in earlier runs, with its disposition (a retried turn/start answers it). */
  accepted?: Map<string, "started" | "queued">;
  /** The session's grants recorded in earlier runs (`approveForSession` answers), oldest first. */
  grants?: readonly ApprovalGrant[];
  /** Every `turn/steer` accepted in earlier runs: its steerId and turnId (a retried steer answers it again). */
  steers?: Map<string, string>;
  /** Steering earlier runs carried over (a `keepInbox` cancel, a policy stop) that no turn has begun with yet. */
  carriedSteers?: CarriedSteer[];
  /** Caps on one turn's steering (`inbox_full` past them). @defaultValue 16 inputs, 65 536 bytes */
  steeringCaps?: { maxSteers?: number; maxBytes?: number };
  /**
   * Called once, synchronously, when a session-log write fails. From then on the session logs and
   * publishes nothing more (a notification is never sent unless it is durable); the host is expected
   * to shut down.
   */
  onLogFailure?: (error: Error) => void;
  /**
   * Sends a notification (already logged) to the clients. `json`, when given, is exactly
   * `JSON.stringify(notificationMessage(method, params))`, already made while logging it.
   */
  publish: (method: NotificationMethod, params: Record<string, unknown>, json?: string) => void;
  shell?: ShellOptions;
  /**
   * Asks the client about a tool call whose script says `approval: true` (the host's
   * {@link ApprovalGate}). Rejects with `signal.reason` when the turn is cancelled first. Without
   * it, every such call is denied: no client can be asked.
   */
  ask?: (params: ToolApproveParams, signal: AbortSignal) => Promise<ApprovalAnswer>;
  /**
   * A running turn past this many milliseconds is cancelled with a cause of kind `hook`, reason
   * `turn time limit (N ms)` (a model's own `turnTimeLimitMs` wins). Queued turns are kept.
   * @unit milliseconds
   */
  turnTimeLimitMs?: number;
  /** Creates the child session of a `task` call; without it, a `task` call fails. */
  delegate?: Delegate;
  /** Stamps each notification record with its place in the host order (`h`); without it, records carry none. */
  hostOrder?: HostOrder;
  /**
   * Runs each turn's work; without it, the scripted `models` play them. A driver may also say its
   * own turn time limit (`turnTimeLimitMs(modelName)`), which wins over the host's.
   */
  driver?: TurnDriver & { turnTimeLimitMs?(modelName: string): number | undefined };
}

/** A turn accepted into a session: running or waiting in the inbox. */
export interface AcceptedTurn {
  turnId: string;
  input: TurnInput[];
  acceptedAt: number;
  /** Set on a child turn: its parent link, depth and agent script. */
  child?: ChildTurnSpec;
}
