/**
 * hostFeatures: what a host's `host/info` capabilities say of the optional features scenarios
 * need (`Scenario.needs`), read from the "host info" scenario's wire. A feature the host opts out
 * of (`approvals: false`) makes its scenarios "not supported"; a feature it lacks makes them "not
 * applicable (capability X absent)", with why: never passed, never failed
 * (docs/checkable-hosts.md).
 */
import type { CheckResult } from "./checkResult.js";
import type { ScenarioNeed } from "./scenario.js";

/** What the host says of each {@link ScenarioNeed}: the ones it opts out of, and the ones it lacks, each with why. */
export interface HostFeatures {
  /** Features the host opts out of (`capabilities.approvals: false`): their scenarios are "not supported" and count as passed. */
  notSupported: Map<ScenarioNeed, string>;
  /** Features the host lacks: their scenarios are not run, "not applicable (capability X absent): …". */
  lacking: Map<ScenarioNeed, string>;
}

/**
 * The features a host has before its host/info is read: none opted out of, none lacking.
 *
 * @example
 * ```ts
 * let features = unknownFeatures(); // until "host info" has run
 * ```
 */
export function unknownFeatures(): HostFeatures {
  return { notSupported: new Map(), lacking: new Map() };
}

/** The reason a scenario needing `capability` is not applicable: the capability is absent, and `why`. */
function absent(capability: string, why: string): string {
  return `not applicable (capability ${capability} absent): ${why}`;
}

/**
 * What `hostInfo`'s wire (the "host info" scenario's result) says of the features scenarios need:
 * - `approvals`: opted out of by `capabilities.approvals: false` (the host never asks);
 * - `subagents`: opt-in, lacking unless `capabilities.subagents: true`;
 * - `policyHooks`, `steering`: lacking when `capabilities` says `false` (a host that says nothing
 *   is checked for them: `capabilities` is an open object).
 *
 * @example
 * ```ts
 * const features = featuresOf(hostInfoResult);
 * features.lacking.get("subagents"); // "not applicable (capability subagents absent): host/info does not list …"
 * ```
 */
export function featuresOf(hostInfo: CheckResult): HostFeatures {
  const features = unknownFeatures();
  let subagents = false;
  for (const { dir, raw } of hostInfo.wire) {
    if (dir !== "server") continue;
    let capabilities: unknown;
    try {
      capabilities = ((JSON.parse(raw) as { result?: { capabilities?: unknown } }).result ?? {}).capabilities;
    } catch {
      continue;
    }
    if (typeof capabilities !== "object" || capabilities === null) continue;
    const said = capabilities as Record<string, unknown>;
    if (said["approvals"] === false)
      features.notSupported.set("approvals", "host/info says capabilities.approvals: false (the host never asks before a tool runs)");
    if (said["subagents"] === true) subagents = true;
    if (said["policyHooks"] === false)
      features.lacking.set(
        "policyHooks",
        absent("policyHooks", "host/info says capabilities.policyHooks: false (no named policy hook of the host stops a turn)"),
      );
    if (said["steering"] === false)
      features.lacking.set("steering", absent("steering", "host/info says capabilities.steering: false (turn/steer input never reaches the running turn)"));
  }
  if (!subagents) features.lacking.set("subagents", absent("subagents", "host/info does not list capabilities.subagents: true (the host runs no subagents)"));
  return features;
}
