/**
 * The list of scenarios `muse check` drives a host through, in the order it runs them: the ones
 * the cookbook recipes cover, each on its own connection, each told what to do through the
 * msp-check model's directives. The subagent scenarios run only on a host that lists
 * `capabilities.subagents`; "restart mid-tree" kills its host and starts it again, and the last,
 * "shutdown mid-tool", shuts its host down (both run only where the check spawned the host). Each scenario file states what it expects of the host on top of
 * the invariants, which runCheck checks on every scenario's wire.
 */
import { approveScenario, denyAndStopScenario, denyScenario, lateApprove, stopWhileAsking } from "./approvalScenarios.js";
import { hostInfo, startAndComplete } from "./basicScenarios.js";
import { grantCoversExactly, grantStaysInSession } from "./grantScenarios.js";
import { cancelRace, staleTurn } from "./cancelRaceScenarios.js";
import { cancelMidModel, cancelMidTool, cancelQueued, keepInbox } from "./cancelScenarios.js";
import { malformedInput } from "./malformedInputScenario.js";
import { hookStopCause, usageOnCancelledTurn } from "./policyScenarios.js";
import { duplicateCommandId, resumeAfterCursor } from "./replayScenarios.js";
import type { Scenario } from "./scenario.js";
import { shutdownMidTool } from "./shutdownScenario.js";
import { streamedDeltas } from "./streamScenario.js";
import { childFails, childQuestionWithdrawn, restartMidTree, stopTree } from "./subagentScenarios.js";
import { deltasAroundSteer, spliceOnDefaultCancel, steerAfterTerminal, noSpliceWithKeepInbox } from "./steerScenarios.js";

/**
 * Every scenario, in the order `muse check` runs them. The first, "host info", also tells whether
 * the host is checkable at all.
 */
export const SCENARIOS: readonly Scenario[] = [
  hostInfo,
  startAndComplete,
  streamedDeltas,
  cancelMidModel,
  cancelMidTool,
  cancelRace,
  staleTurn,
  keepInbox,
  cancelQueued,
  resumeAfterCursor,
  duplicateCommandId,
  malformedInput,
  approveScenario,
  denyScenario,
  denyAndStopScenario,
  stopWhileAsking,
  lateApprove,
  hookStopCause,
  usageOnCancelledTurn,
  grantCoversExactly,
  grantStaysInSession,
  steerAfterTerminal,
  spliceOnDefaultCancel,
  noSpliceWithKeepInbox,
  deltasAroundSteer,
  stopTree,
  childFails,
  childQuestionWithdrawn,
  restartMidTree,
  shutdownMidTool,
];
