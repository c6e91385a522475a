/**
 * The parts a session is made of, filled in by `openSession`: how it connects, where it is kept,
 * its turns and subagent tree, its model choice and its bounds.
 */
import type { MspClient } from "../client/mspClient.js";
import type { ReconnectPolicy } from "./reconnectPolicy.js";
import type { SessionModelChoice } from "./sessionModelChoice.js";
import type { SessionKeeper } from "./sessionKeeper.js";
import type { SessionTree } from "./sessionTree.js";
import type { SessionTurns } from "./sessionTurns.js";

/** What the session needs. */
export interface SessionParts {
  connect: () => Promise<MspClient>;
  sessionId: string | undefined;
  keeper: SessionKeeper;
  turns: SessionTurns;
  /** The subagent tree below the turns: descendant sessions, their cursors, their turns. */
  tree: SessionTree;
  /** The model asked for at create, a pending `setModel`, and what the host said. */
  model: SessionModelChoice;
  reconnect: ReconnectPolicy | undefined;
  /** The bound on each command's answer. @unit milliseconds */
  commandTimeoutMs: number;
  /** Where a warning goes (a full storage quota, a record that could not be read). */
  onWarning: (message: string) => void;
}
