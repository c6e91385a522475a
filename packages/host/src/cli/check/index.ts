/**
 * `muse check`, the host conformance run: runCheck, its openers, its scenarios' names and its
 * types. The `muse` bin wires `muse check [--spawn … | --ws …]` to these.
 */
export { runCheck, CHECK_SCENARIOS, DEFAULT_SCENARIO_TIMEOUT_MS } from "./runCheck.js";
export type { CheckedHost, CheckOptions, SpawnedProcess } from "./runCheck.js";
export type { CheckOutcome, CheckResult } from "./checkResult.js";
export type { CheckWire } from "./checkWire.js";
export { spawnForCheck, webSocketForCheck } from "./openers.js";
