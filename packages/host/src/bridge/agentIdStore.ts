/**
 * Where a bridged session keeps the id of its agent-side conversation (a Codex thread, an ACP
 * session), so that the session's next turn after a host restart, or after its agent died,
 * continues that conversation instead of starting a new one. One small JSON file per MSP session,
 * `{"<field>": id}`, host-internal (never on the wire), written durably: a temporary file, fsync,
 * rename over the old one, fsync of the directory. A file that cannot be read or parsed counts as
 * no id, and says why to `logger`.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** What an {@link AgentIdStore} keeps: the file's key, and what the id names, for the log. */
export interface AgentIdKind {
  /** The key of the id in the file, e.g. `"threadId"`. */
  field: string;
  /** What the id names, e.g. `"Codex thread"`. */
  label: string;
}

/**
 * One MSP session's persisted agent-side id.
 *
 * @example
 * ```ts
 * const store = new AgentIdStore(join(dataDir, "bridge", "codex", `${sessionId}.json`), { field: "threadId", label: "Codex thread" });
 * store.save("01a23d53-74be-79b3-beef-25f242a9197e");
 * store.load(); // "01a23d53-74be-79b3-beef-25f242a9197e", also after a restart
 * ```
 */
export class AgentIdStore {
  /** @param path - The session's file. @param kind - Its key and what it names. @param logger - Told why a file was unusable. */
  constructor(
    readonly path: string,
    private readonly kind: AgentIdKind,
    private readonly logger: (line: string) => void = () => {},
  ) {}

  /** The id saved, or `undefined` when there is none (or the file is unusable). */
  load(): string | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") this.logger(`${this.kind.label} file ${this.path}: ${(error as Error).message}`);
      return undefined;
    }
    try {
      const id = (JSON.parse(text) as Record<string, unknown>)[this.kind.field];
      if (typeof id === "string" && id !== "") return id;
    } catch {
      // said below
    }
    this.logger(`${this.kind.label} file ${this.path} holds no ${this.kind.field}; the session's next turn starts a new ${this.kind.label}`);
    return undefined;
  }

  /** Saves `id`, durably, before it returns. */
  save(id: string): void {
    const dir = dirname(this.path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = `${this.path}.${process.pid}.tmp`;
    const fd = openSync(temp, "w", 0o600);
    try {
      writeSync(fd, `${JSON.stringify({ [this.kind.field]: id })}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.path);
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }

  /** Forgets the id (one the agent could not continue): the next turn starts afresh. */
  forget(): void {
    rmSync(this.path, { force: true });
  }
}
