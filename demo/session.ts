/**
 * Opening the page's session on a fresh connection: resume the remembered one from the
 * remembered cursor (the host replays only what came after it), or create one. Unfinished turns
 * the page remembers are re-attached by retrying their `turn/start` with the same commandId: MSP
 * hosts answer a repeated commandId with the original acceptance and start nothing, so the page
 * gets a real TurnHandle (and a StopController) for a turn another page load started.
 */
import { MspError, RejectionReasons, type MspClient, type TurnHandle } from "@muse-code/sdk";
import type { Remembered } from "./sessionMemory.js";

/** The session the page is in, and how it got there. */
export interface OpenedSession {
  sessionId: string;
  /** Resumed (with how many notifications the host replays), or created (the remembered one, if any, was unknown to the host). */
  how: { resumed: true; replayed: number } | { resumed: false; forgot?: string };
}

/**
 * Resume `remembered.sessionId` after `remembered.cursor`, or create a session. The page's
 * notification handlers must be installed first: the replay follows the result on the wire.
 */
export async function openSession(client: MspClient, remembered: Readonly<Remembered>): Promise<OpenedSession> {
  const { sessionId, cursor } = remembered;
  if (sessionId !== undefined) {
    // #region resume
    try {
      const result = await client.command("session/resume", cursor === undefined ? { sessionId } : { sessionId, afterCursor: cursor });
      return { sessionId, how: { resumed: true, replayed: result.replayed } };
    } catch (error) {
      // A host started afresh (no --data, or another data dir) does not know the session: start a new one.
      if (!(MspError.is(error) && error.kind === "commandRejected" && error.data["reason"] === RejectionReasons.unknownSession)) throw error;
    }
    // #endregion resume
  }
  const created = await client.command("session/create", {});
  return sessionId === undefined
    ? { sessionId: created.sessionId, how: { resumed: false } }
    : { sessionId: created.sessionId, how: { resumed: false, forgot: sessionId } };
}

/**
 * A TurnHandle for a turn the page started before a reload: `turn/start` again, with the same
 * commandId (its turnId) and input. A turn the page first saw in the stream (another tab started
 * it) is retried with an empty input: the host answers from its record of the commandId.
 */
// #region reattach
export function reattachTurn(client: MspClient, sessionId: string, turnId: string, prompt: string | undefined): TurnHandle {
  // The turnId of a started turn is the commandId of its turn/start: the same commandId again is a retry.
  return client.startTurn({ sessionId, commandId: turnId, input: [{ type: "text", text: prompt ?? "" }] });
}
// #endregion reattach
