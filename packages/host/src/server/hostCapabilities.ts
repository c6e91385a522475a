/** What host/info's `capabilities` says, for the reference host's scripted models and for each bridged agent. */
/**
 * host/info's `capabilities` when the scripted models play the turns (docs/protocol.md).
 *
 * @example
 * ```ts
 * const capabilities = agent === undefined ? SCRIPTED_CAPABILITIES : AGENT_CAPABILITIES[agent.kind];
 * ```
 */
export const SCRIPTED_CAPABILITIES = {
  keepInbox: true,
  resume: true,
  steering: true,
  scopedApprovals: true,
  usage: true,
  turnTimeLimit: true,
  subagents: true,
  policyHooks: true,
} as const;

/**
 * host/info's `capabilities` when an agent plays the turns (`muse serve --agent`): its model
 * cannot ask a host hook to stop a turn. Codex's subagent threads are child sessions (see
 * docs/bridges.md), but only Codex's model decides to spawn one, so the scripted delegation of
 * `muse check`'s subagent scenarios cannot be played: `subagents` stays unlisted. ACP maps none.
 * Steering is Codex's own `turn/steer`; ACP has no steering, so an ACP host refuses it
 * (docs/bridges.md).
 *
 * @example
 * ```ts
 * AGENT_CAPABILITIES.acp.steering; // false
 * ```
 */
export const AGENT_CAPABILITIES = {
  codex: { ...SCRIPTED_CAPABILITIES, subagents: false, policyHooks: false },
  acp: { ...SCRIPTED_CAPABILITIES, steering: false, subagents: false, policyHooks: false },
} as const;
