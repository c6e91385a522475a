/**
 * The `session/resume` a session sends on a new connection: from its last cursor, and each
 * descendant session from its own. A cursor the host refuses (past what it has: a log cut short,
 * storage from a backup) is dropped, and the session is replayed whole instead.
 */
import type { MspClient } from "../client/mspClient.js";
import { MspError } from "../errors.js";
import type { ChildCursors, Item } from "@muse-code/protocol";

/** Where a resume starts. */
export interface ResumeFrom {
  sessionId: string;
  afterCursor?: string;
  childCursors?: ChildCursors;
}

/** What the resume tells the session as it goes. */
export interface ResumeSteps {
  /** A resume is about to be written (its replay counts from here). */
  sending(): void;
  /** The host refused the cursors: forget them. */
  cursorsRefused(): void;
}

/** Send the resume, bounded by `timeoutMs`; see the module header. */
export async function sendResume(client: MspClient, from: ResumeFrom, timeoutMs: number, steps: ResumeSteps): Promise<{ items?: Item[]; replayed?: number }> {
  steps.sending();
  try {
    return await client.command<"session/resume">("session/resume", from, { timeoutMs });
  } catch (error) {
    if (!(MspError.is(error) && error.kind === "rpcError" && (from.afterCursor !== undefined || from.childCursors !== undefined))) throw error;
    steps.cursorsRefused();
    steps.sending();
    return client.command<"session/resume">("session/resume", { sessionId: from.sessionId }, { timeoutMs });
  }
}
