/**
 * `@muse-code/sdk/ui`: the Stop button layer. `StopController` drives a Stop button (and the
 * approval dialog) for one turn from a `TurnHandle` of `@muse-code/sdk`; `describeTerminal` and
 * `describePhase` put a turn's ending and phase in words, `canStop` says when Stop is live.
 * Framework-neutral, and browser-safe: nothing under it imports `node:*`.
 *
 * It is its own entry point, not part of the root, so the root stays within its size budget for
 * apps that render their own Stop (see docs/architecture.md). Any new export added here becomes
 * public API. Use named exports, not wildcards.
 *
 * @packageDocumentation
 */
export { StopController, StopStates } from "./stopController.js";
export type { StopControllerOptions, StopSnapshot, StopState } from "./stopController.js";
export { describeTerminal } from "./describeTerminal.js";
export { describeUsage } from "./describeUsage.js";
export { describeEnding } from "./describeEnding.js";
export { describePhase, canStop } from "./describePhase.js";
export type { TurnPhaseView } from "./describePhase.js";
export { offeredDecisions, problemWithDecision } from "@muse-code/protocol/approvalOffer.js";
export { TurnTree, describeTreeProgress } from "./turnTree.js";
export type { TreeProgress, TreeTurn, TreeTurnState, TurnTreeOptions } from "./turnTree.js";
export { followTurnTree } from "./turnTreeFollower.js";
export type { EndedTree, FollowTurnTreeOptions, TurnTreeFollower } from "./turnTreeFollower.js";
