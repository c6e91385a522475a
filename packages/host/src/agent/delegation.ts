/** Delegation: what a session's tool calls need to run a `task` call as a child turn in a child session. */
import type { CancelCause, ParentTurnLink, TurnCompletedParams } from "@muse-code/protocol";
import type { ChildTurnSpec } from "./childTurnSpec.js";
import type { TurnDriver } from "./turnDriver.js";

export type { ChildTurnSpec };

/**
 * The default deepest a child turn may be: a `task` call in a turn at this depth fails
 * `subagent depth limit (3)`. @unit levels below a top-level turn
 */
export const DEFAULT_MAX_SUBAGENT_DEPTH = 3;

/**
 * The default most child turns one turn runs at once: a `task` call beyond it fails
 * `subagent fan-out limit (8)`. @unit child turns running at once, per turn
 */
export const DEFAULT_MAX_SUBAGENTS_PER_TURN = 8;

/**
 * How a child turn ended: its terminal, and its last message's text so far (a salvaged prefix
 * included; `""` when it wrote none).
 */
export interface ChildOutcome {
  params: TurnCompletedParams;
  lastMessage: string;
}

/**
 * A child session created for one `task` call, its turn not started yet: the caller links the
 * call to it (`subagent` patch) first, then starts it.
 */
export interface ChildTurn {
  readonly sessionId: string;
  readonly turnId: string;
  /** Starts the child turn (once). */
  start(): void;
  /** Cancels the child turn (a no-op once it ended). */
  cancel(cause: CancelCause): void;
  /** Resolves once the child turn's terminal is durable and sent. */
  ended(): Promise<ChildOutcome>;
}

/**
 * What a `task` call asks of the host: a child session for agent `agent` of model `modelName`,
 * whose turn runs at `depth`, for the call `parent`, while the delegating turn already runs
 * `running` children.
 */
export interface DelegationRequest {
  parent: ParentTurnLink;
  /** @unit levels: the child turn's depth (1 for a child of a top-level turn) */
  depth: number;
  agent: string;
  prompt: string;
  modelName: string;
  /** @unit child turns the delegating turn runs now */
  running: number;
  /**
   * What runs the child turn instead of agent `agent`'s script: a bridge's driver of an agent's own
   * subagent (a Codex child thread). Its session keeps this driver for every later turn.
   */
  driver?: TurnDriver;
}

/**
 * Creates the child session of a `task` call, or throws a {@link DelegationRefused} (a bound, an
 * unknown agent) whose message is the call's `failureReason`.
 */
export type Delegate = (request: DelegationRequest) => ChildTurn;

/**
 * Why a `task` call created no child session: its message is the call's `failureReason`, e.g.
 * `subagent depth limit (3)`.
 */
export class DelegationRefused extends Error {
  override readonly name = "DelegationRefused";
}
