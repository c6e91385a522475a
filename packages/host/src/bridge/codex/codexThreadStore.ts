/**
 * Where a bridged session keeps its Codex thread id, so that the session's next turn after a host
 * restart (or after its app-server died) resumes the same Codex thread (`thread/resume`) instead
 * of starting a new one. One small JSON file per session, `{"threadId": …}`, kept by the bridges'
 * one {@link AgentIdStore}.
 */
import { join } from "node:path";
import { AgentIdStore } from "../agentIdStore.js";

/**
 * The file of one session's Codex thread id under a host's data directory:
 * `<dataDir>/bridge/codex/<sessionId>.json`.
 *
 * @example
 * ```ts
 * const store = new CodexThreadStore(codexThreadPath("/var/muse", sessionId));
 * ```
 */
export function codexThreadPath(dataDir: string, sessionId: string): string {
  return join(dataDir, "bridge", "codex", `${sessionId}.json`);
}

/**
 * One session's persisted Codex thread id.
 *
 * @example
 * ```ts
 * const store = new CodexThreadStore(codexThreadPath(dataDir, sessionId));
 * store.save("01a23d53-74be-79b3-beef-25f242a9197e");
 * store.load(); // "01a23d53-74be-79b3-beef-25f242a9197e", also after a restart
 * ```
 */
export class CodexThreadStore extends AgentIdStore {
  /** @param path - The session's file (see {@link codexThreadPath}). @param logger - Told why a file was unusable. */
  constructor(path: string, logger: (line: string) => void = () => {}) {
    super(path, { field: "threadId", label: "Codex thread" }, logger);
  }
}
