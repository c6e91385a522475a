/** Scenario: the shape of one `muse check` conformance scenario (its name, its run, its wire check, what it needs). */
import type { WireTap } from "./checkWire.js";
import type { ScenarioContext } from "./scenarioContext.js";

/**
 * One conformance scenario.
 *
 * @example
 * ```ts
 * const ping: Scenario = { name: "ping", run: async (ctx) => void (await ctx.command("host/info", {})) };
 * ```
 */
export interface Scenario {
  /** Its name in the table, e.g. "cancel mid-tool". */
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
  /**
   * Checks the scenario's wire against the invariants and returns the problems, each starting
   * `line <n>:`. Default: `checkTranscript` over the whole wire.
   */
  checkWire?(wire: WireTap): string[];
  /** An optional MSP feature the scenario needs: a host whose host/info opts out of it is reported "not supported". */
  needs?: "approvals";
  /**
   * The scenario signals the host's process, so it runs only where the check spawned the host
   * (`CheckedHost.spawned`); elsewhere it is reported "not run".
   */
  needsSpawnedHost?: true;
}
