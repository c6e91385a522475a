/**
 * Optional peer dependencies of the host (`ws`, `proper-lockfile`): each is loaded where it is
 * used, never at import time, and one that is not installed fails with an error naming the package
 * and the command that installs it.
 */
import { createRequire } from "node:module";

/**
 * An optional peer dependency the host needs here is not installed. `message` says what needed it
 * and how to install it, e.g.
 * `muse-host serve --ws needs the optional package "ws": npm install ws`.
 *
 * @example
 * ```ts
 * try { await serveWebSocket(host, { token }); } catch (e) { if (e instanceof MissingPeerError) console.error(e.message); }
 * ```
 */
export class MissingPeerError extends Error {
  /** Always `"MISSING_PEER_DEPENDENCY"`. */
  readonly code = "MISSING_PEER_DEPENDENCY";
  /** The package to install, e.g. `ws`. */
  readonly packageName: string;

  constructor(packageName: string, neededBy: string, cause: unknown) {
    super(`${neededBy} needs the optional package "${packageName}": npm install ${packageName}`, { cause });
    this.name = "MissingPeerError";
    this.packageName = packageName;
  }
}

/** Whether `error` says that `packageName` itself (not something it imports) could not be found. */
function isNotFound(error: unknown, packageName: string): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  const message = String((error as Error).message);
  return message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`);
}

/**
 * Imports optional peer `packageName` (a dynamic `import()`), or rejects with a
 * {@link MissingPeerError} that names what needed it (`neededBy`) when it is not installed.
 *
 * @example
 * ```ts
 * const { WebSocketServer } = await importOptionalPeer<typeof import("ws")>("ws", "muse-host serve --ws");
 * ```
 */
export async function importOptionalPeer<T>(packageName: string, neededBy: string): Promise<T> {
  try {
    return (await import(packageName)) as T;
  } catch (error) {
    if (isNotFound(error, packageName)) throw new MissingPeerError(packageName, neededBy, error);
    throw error;
  }
}

/**
 * Loads optional peer `packageName` synchronously (CommonJS `require`), for a caller that cannot
 * wait: the data-dir lock is taken inside the synchronous `createHost`. Throws a
 * {@link MissingPeerError} when it is not installed.
 *
 * @example
 * ```ts
 * const lockfile = requireOptionalPeer<typeof import("proper-lockfile")>("proper-lockfile", "the data-dir lock");
 * ```
 */
export function requireOptionalPeer<T>(packageName: string, neededBy: string): T {
  try {
    return createRequire(import.meta.url)(packageName) as T;
  } catch (error) {
    if (isNotFound(error, packageName)) throw new MissingPeerError(packageName, neededBy, error);
    throw error;
  }
}
