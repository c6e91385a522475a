/**
 * checkResult: what `muse check` finds, one verdict per scenario and the run's outcome. runCheck
 * produces them and checkReport prints them; both import them from here.
 */
import type { WireLine } from "./checkWire.js";

/** The verdict on one scenario. */
export interface CheckResult {
  /** The scenario's name, as in the table: e.g. "cancel mid-tool". */
  scenario: string;
  passed: boolean;
  /** True when the scenario hit its timeout. */
  timedOut: boolean;
  /** @unit milliseconds */
  durationMs: number;
  /** One sentence per problem; invariant problems start `line <n>:`. Empty when passed. */
  problems: string[];
  /**
   * What the wire shows that is not a problem but worth saying, one sentence each starting
   * `line <n>:`: e.g. a cancelled terminal with no `cause`. Present only when there are some; a
   * note never fails a scenario.
   */
  notes?: string[];
  /** The wire lines the problems point at, in wire order. */
  lines: Array<Pick<WireLine, "line" | "dir" | "raw">>;
  /** The scenario's whole wire, in order. */
  wire: Array<Pick<WireLine, "line" | "dir" | "raw">>;
  /**
   * Why the scenario was not run: the host opted out of the feature it needs (host/info
   * `capabilities.approvals: false`). Such a result counts as passed.
   */
  notSupported?: string;
  /**
   * Why the check could not run the scenario over this connection: "shutdown mid-tool" and
   * "restart mid-tree" signal the host's process, which the check has only when it spawned the
   * host ("restart mid-tree" also needs a host that keeps its sessions across a restart); the
   * subagent scenarios need a host whose host/info lists `capabilities.subagents: true`, and a
   * scenario needing `policyHooks` or `steering` a host that does not say it `false` (then the
   * reason reads "not applicable (capability X absent): …", ./hostFeatures.ts); "hook stop's cause"
   * and "usage on a cancelled turn" need the MSP 2.1 directive keys `stopByHook` and `usage`,
   * which a host without those features refuses (it fails the turn naming the key). Such a result is not
   * passed (`passed` is false) and not failed: `CheckOutcome.passed` leaves it out.
   */
  notRun?: string;
}

/** What `runCheck` resolves with: `passed` when every scenario passed, or was not run (`notRun`). */
export interface CheckOutcome {
  passed: boolean;
  results: CheckResult[];
}
