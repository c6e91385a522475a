/** ChildTurnSpec: what a child turn starts with (its parent link, depth and agent script), shared by the delegation and the turn driver seam. */
import type { ParentTurnLink } from "@muse-code/protocol";
import type { ScriptedTurn } from "../model/scriptedModel.js";

/**
 * A child turn, as the session agent that runs it starts it: its link to the delegating call,
 * its depth, and the agent script it plays.
 */
export interface ChildTurnSpec {
  parent: ParentTurnLink;
  /** @unit levels: 1 for a child of a top-level turn */
  depth: number;
  script: ScriptedTurn;
}
