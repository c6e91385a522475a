/**
 * Where a bridged session keeps its ACP session id, so that the session's first turn after a host
 * restart (or after its agent died) loads the same ACP session (`session/load`, where the agent
 * offers `loadSession`) instead of starting a new one. One small JSON file per MSP session,
 * `{"sessionId": …}`, kept by the bridges' one {@link AgentIdStore}.
 */
import { join } from "node:path";
import { AgentIdStore } from "../agentIdStore.js";

/**
 * The file of one MSP session's ACP session id under a host's data directory:
 * `<dataDir>/bridge/acp/<sessionId>.json`.
 *
 * @example
 * ```ts
 * const store = new AcpSessionStore(acpSessionPath("/var/muse", sessionId));
 * ```
 */
export function acpSessionPath(dataDir: string, sessionId: string): string {
  return join(dataDir, "bridge", "acp", `${sessionId}.json`);
}

/**
 * One MSP session's persisted ACP session id.
 *
 * @example
 * ```ts
 * const store = new AcpSessionStore(acpSessionPath(dataDir, sessionId));
 * store.save("019ae3c2-5a0e-7d51-9c7e-3d1f0b4a2e11");
 * store.load(); // "019ae3c2-5a0e-7d51-9c7e-3d1f0b4a2e11", also after a restart
 * ```
 */
export class AcpSessionStore extends AgentIdStore {
  /** @param path - The session's file (see {@link acpSessionPath}). @param logger - Told why a file was unusable. */
  constructor(path: string, logger: (line: string) => void = () => {}) {
    super(path, { field: "sessionId", label: "ACP session" }, logger);
  }
}
