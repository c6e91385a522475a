/** Scenario: the shape of one `muse check` conformance scenario (its name, its run, its wire check, what it needs). */
import type { WireTap } from "./checkWire.js";
import type { ScenarioContext } from "./scenarioContext.js";

/**
 * An optional MSP feature a scenario needs (see {@link Scenario.needs}), named as `host/info`'s
 * `capabilities` name it.
 */
export type ScenarioNeed = "approvals" | "subagents" | "policyHooks" | "steering";

/** One conformance scenario. */
export interface Scenario {
  /** Its name in the table, e.g. "cancel mid-tool". */
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
  /**
   * Checks the scenario's wire against the invariants and returns the problems, each starting
   * `line <n>:`. Default: `checkTranscript` over the whole wire.
   */
  checkWire?(wire: WireTap): string[];
  /**
   * The optional MSP features the scenario needs. `approvals`: a host whose host/info says
   * `capabilities.approvals: false` has it reported "not supported". `subagents`: a
   * host whose host/info does not list `capabilities.subagents` has it reported "not run", not
   * applicable. `policyHooks`, `steering`: a host whose host/info says `false` for it has it
   * reported "not run", not applicable (./hostFeatures.ts).
   */
  needs?: readonly ScenarioNeed[];
  /**
   * The scenario signals the host's process, so it runs only where the check spawned the host
   * (`CheckedHost.spawned`); elsewhere it is reported "not run".
   */
  needsSpawnedHost?: true;
}
