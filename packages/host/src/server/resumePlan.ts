/**
 * The plan of a `session/resume`: from which cursor each session of the tree is replayed, how many
 * notifications that is, and the items in progress at the cursors (the base the replay applies to).
 * Delivery then feeds the planned ranges from the logs.
 */
import { isObject } from "@muse-code/protocol";
import { formatViewCursor, parseViewCursor } from "@muse-code/protocol/cursor.js";
import type { SessionAgent } from "../agent/sessionAgent.js";
import { logStart, readSessionLog } from "../log/sessionLogReader.js";
import type { Handled } from "./commandHandlers.js";
import type { ReplayRange } from "./commandCache.js";
import { invalid, optionalString } from "./commandParams.js";
import { CommandError, JsonRpcErrorCodes } from "./jsonRpc.js";
import { resumePoint, type ReplayScan, type ResumePoint } from "./resumePoint.js";

/** What a resume plan reads of the host: its sessions and the tree of links between them. */
export interface ResumeHost {
  /** The session agent of `sessionId`, loaded from its log if need be; undefined when it cannot be. */
  load(sessionId: string): SessionAgent | undefined;
  /** The session agent of `sessionId` if it is in memory. */
  live(sessionId: string): SessionAgent | undefined;
  descendantsOf(sessionId: string): string[];
  parentOf(child: string): string | undefined;
  log(line: string): void;
}

/** Plans the resume of `session` for `params`; throws a CommandError for a cursor it refuses. */
export function planResume(session: SessionAgent, params: Record<string, unknown>, commandId: string, host: ResumeHost): Handled {
  const afterCursor = optionalString(params, "afterCursor");
  const after = afterCursor === undefined ? 0 : resumeCursor(session, afterCursor, "afterCursor", commandId);
  // The tree below it: each session after its own cursor in childCursors; one not
  // named is replayed whole if the client cannot have heard its link (it comes after the cursor
  // its parent is replayed from) or a turn of it runs, else not at all (the client forgot it).
  const tree = host.descendantsOf(session.sessionId);
  const named = childCursorsParam(params, session.sessionId, tree);
  for (const [childId, cursor] of named) {
    const child = host.load(childId);
    if (child === undefined) throw invalid(`childCursors names session ${childId}, whose log cannot be read`);
    resumeCursor(child, cursor, `childCursors.${childId}`, commandId);
  }
  // With a cursor, the items in progress there come whole in the answer: the base the replay's
  // deltas and patches apply to, for a client that holds them and one that holds nothing alike.
  const root = scanFrom(session, after);
  const scans = new Map([[session.sessionId, root.scan]]);
  let replayed = root.replayed;
  const items = [...root.items];
  /** Each session replayed: the cursor it is replayed from, and the links its log holds. */
  const replaying = new Map([[session.sessionId, { after, links: root.links }]]);
  const replayChildren: NonNullable<ReplayRange["children"]> = [];
  for (const childId of tree) {
    const cursor = named.get(childId);
    // Only a session in memory can have a running turn: one the client forgot is not even loaded.
    if (cursor === undefined && host.live(childId)?.busy !== true) {
      const parent = replaying.get(host.parentOf(childId) ?? "");
      const link = parent?.links.get(childId);
      if (parent === undefined || (link !== undefined && link <= parent.after)) continue; // heard, and forgotten
    }
    const child = host.load(childId);
    if (child === undefined) {
      host.log(`resume of session ${session.sessionId}: child session ${childId} cannot be loaded, not replayed`);
      continue;
    }
    const childAfter = cursor === undefined ? 0 : resumeCursor(child, cursor, `childCursors.${childId}`, commandId);
    const point = scanFrom(child, childAfter);
    scans.set(childId, point.scan);
    replaying.set(childId, { after: childAfter, links: point.links });
    replayed += point.replayed;
    items.push(...point.items);
    replayChildren.push({ sessionId: child.sessionId, after: childAfter, upTo: point.upTo });
  }
  const withItems = afterCursor !== undefined || named.size > 0;
  const result = withItems ? { sessionId: session.sessionId, replayed, items } : { sessionId: session.sessionId, replayed };
  const replay: ReplayRange = { sessionId: session.sessionId, after, upTo: root.upTo, tree, scans };
  if (replayChildren.length > 0) replay.children = replayChildren;
  return { result, replay };
}

/** The resume point of `session` after cursor number `after`, from one scan of its log that also finds where the replay starts. */
function scanFrom(session: SessionAgent, after: number): ResumePoint & { scan: ReplayScan } {
  const scan = logStart();
  return resumePoint(readSessionLog(session.logPath, { from: scan }), after, scan);
}

/**
 * The cursor number of `cursor`, a resume cursor of `session` given as `name`: refused (invalid
 * params) when it is no cursor of that session, or one beyond its last (with `lastCursor`, a
 * valid cursor to retry with): accepting it would hand the client a future cursor, and every
 * later notification would look like a step back.
 */
function resumeCursor(session: SessionAgent, cursor: string, name: string, commandId: string): number {
  const n = parseViewCursor(cursor, session.sessionId);
  if (n === undefined) throw invalid(`${name} ${cursor} is not a cursor of session ${session.sessionId}`);
  if (n > session.lastCursor) {
    throw new CommandError(JsonRpcErrorCodes.invalidParams, `${name} ${cursor} is beyond the last cursor of session ${session.sessionId}`, {
      commandId,
      sessionId: session.sessionId,
      lastCursor: formatViewCursor(session.sessionId, session.lastCursor),
    });
  }
  return n;
}

/**
 * `session/resume.childCursors`, checked: an object whose keys are sessions of the tree
 * below `sessionId` and whose values are strings (each is checked as a cursor of its session by
 * the caller). Absent: none named.
 */
function childCursorsParam(params: Record<string, unknown>, sessionId: string, tree: readonly string[]): Map<string, string> {
  const value = params["childCursors"];
  const named = new Map<string, string>();
  if (value === undefined) return named;
  if (!isObject(value) || Array.isArray(value)) throw invalid("childCursors must be an object: sessionId to afterCursor");
  const below = new Set(tree);
  for (const [childId, cursor] of Object.entries(value)) {
    if (!below.has(childId)) throw invalid(`childCursors names session ${childId}, which is not below session ${sessionId}`);
    if (typeof cursor !== "string") throw invalid(`childCursors.${childId} must be a cursor string`);
    named.set(childId, cursor);
  }
  return named;
}
