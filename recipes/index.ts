/**
 * The cookbook: every recipe, in the order the runner lists them.
 */
import { recipe as approveForSession } from "./approve-for-session.js";
import { recipe as approveTool } from "./approve-tool.js";
import { recipe as cancelBeforeAck } from "./cancel-before-ack.js";
import { recipe as cancelMidTurn } from "./cancel-mid-turn.js";
import { recipe as cancelRace } from "./cancel-race.js";
import { recipe as cannedHostTest } from "./canned-host-test.js";
import { recipe as denyTool } from "./deny-tool.js";
import { recipe as fingerprintCheck } from "./fingerprint-check.js";
import { recipe as gettingStarted } from "./getting-started.js";
import { recipe as keepInbox } from "./keep-inbox.js";
import type { Recipe } from "./recipe.js";
import { recipe as staleTurn } from "./stale-turn.js";
import { recipe as steerARunningTurn } from "./steer-a-running-turn.js";
import { recipe as stopButton } from "./stop-button.js";
import { recipe as stopByTimeLimit } from "./stop-by-time-limit.js";
import { recipe as stopACodexTurn } from "./stop-a-codex-turn.js";
import { recipe as stopAnAcpTurn } from "./stop-an-acp-turn.js";
import { recipe as stopASubagentTree } from "./stop-a-subagent-tree.js";
import { recipe as stopWhileAsking } from "./stop-while-asking.js";
import { recipe as stopWhileSubagentAsks } from "./stop-while-subagent-asks.js";
import { recipe as subagentFailsOnItsOwn } from "./subagent-fails-on-its-own.js";
import { recipe as subagentTreeRestart } from "./subagent-tree-restart.js";
import { recipe as surviveHostCrash } from "./survive-host-crash.js";
import { recipe as switchModel } from "./switch-model.js";
import { recipe as twoWaiters } from "./two-waiters.js";

export const recipes: readonly Recipe[] = [
  gettingStarted,
  cancelMidTurn,
  stopButton,
  cancelRace,
  staleTurn,
  cancelBeforeAck,
  twoWaiters,
  keepInbox,
  fingerprintCheck,
  switchModel,
  surviveHostCrash,
  cannedHostTest,
  approveTool,
  denyTool,
  stopWhileAsking,
  stopByTimeLimit,
  approveForSession,
  steerARunningTurn,
  stopASubagentTree,
  subagentFailsOnItsOwn,
  stopWhileSubagentAsks,
  subagentTreeRestart,
  stopACodexTurn,
  stopAnAcpTurn,
];
