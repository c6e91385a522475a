/**
 * A session's grants: the exact rules its `approveForSession` answers created (MSP 2.1). A grant
 * covers a later call of the same tool with byte-equal arguments (the JSON-encoded `args` string
 * of its item), and nothing else. Bounded: at most {@link MAX_GRANTS_PER_SESSION}; once full, the
 * host stops offering `approveForSession`, so a question can still be answered once.
 */
import type { ApprovalGrant } from "@muse-code/protocol";

/**
 * Most grants one session holds. Past it the host's questions no longer offer
 * `approveForSession` (each call is asked and approved once), so the session's grants, its log's
 * grant records, and what a restart reads back stay bounded.
 */
export const MAX_GRANTS_PER_SESSION = 256;

/** The grants of one session, by the exact call each covers. */
export class SessionGrants {
  readonly #byCall = new Map<string, ApprovalGrant>();

  /** Starts with `grants` (read back from the session log), at most {@link MAX_GRANTS_PER_SESSION} of them. */
  constructor(grants: Iterable<ApprovalGrant> = []) {
    for (const grant of grants) this.add(grant);
  }

  /** How many grants the session holds. */
  get size(): number {
    return this.#byCall.size;
  }

  /** True when no more grants may be added (the host then does not offer `approveForSession`). */
  get full(): boolean {
    return this.#byCall.size >= MAX_GRANTS_PER_SESSION;
  }

  /** Adds an exact grant (no-op when full, or for a rule that is not `exact`: the reference host makes no other). */
  add(grant: ApprovalGrant): void {
    if (this.full || grant.match !== "exact" || grant.args === undefined) return;
    const key = callKey(grant.tool, grant.args);
    if (!this.#byCall.has(key)) this.#byCall.set(key, { ...grant });
  }

  /** The grant that covers a call of `tool` with exactly `args`, if one does. */
  covering(tool: string, args: string): ApprovalGrant | undefined {
    const grant = this.#byCall.get(callKey(tool, args));
    return grant === undefined ? undefined : { ...grant };
  }
}

/** The key of one exact call: the tool's name and its arguments, unambiguously joined. */
function callKey(tool: string, args: string): string {
  return JSON.stringify([tool, args]);
}
