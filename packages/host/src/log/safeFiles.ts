/**
 * Safe files in the data dir: session logs are opened with `O_NOFOLLOW | O_NONBLOCK` and accepted
 * only when `fstat` says they are regular files with one link, so a planted symlink, FIFO, device,
 * directory or hard link is refused (never followed, never blocked on), and `sessions/` itself
 * must be a real directory.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, type Stats } from "node:fs";

/**
 * A data-dir entry the host refuses to use: not a regular file, a symlink, a hard link, or a
 * `sessions/` that is not a real directory. `code` is stable; `message` is one line naming the
 * path and why.
 */
export class UnsafeFileError extends Error {
  readonly code = "UNSAFE_FILE";
  readonly path: string;
  /** Why, e.g. `"a symlink"`, `"a FIFO"`, `"a directory"`, `"hard-linked (2 links)"`. */
  readonly why: string;

  constructor(path: string, why: string) {
    super(`${path} is ${why}; refusing to use it`);
    this.name = "UnsafeFileError";
    this.path = path;
    this.why = why;
  }
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  if (stats.isSymbolicLink()) return "a symlink";
  return "not a regular file";
}

/**
 * How {@link openLogFile} opens: `read` (read-only), `append` (read-write, appending; the file
 * must exist) or `create` (read-write, appending; the file must not exist yet).
 */
export type LogOpenMode = "read" | "append" | "create";

/**
 * Opens a session log without following a symlink or blocking on a FIFO, and returns its fd
 * and stats once `fstat` shows a regular file with exactly one link. Otherwise closes it and
 * throws {@link UnsafeFileError}. A symlink (`ELOOP`) is an `UnsafeFileError` too; other errors
 * (`ENOENT`, `EMFILE`, `EEXIST` for `create`…) are thrown as they are.
 */
export function openLogFile(path: string, mode: LogOpenMode): { fd: number; stats: Stats } {
  const { O_RDONLY, O_RDWR, O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;
  const flags = (mode === "read" ? O_RDONLY : O_RDWR | O_APPEND) | (mode === "create" ? O_CREAT | O_EXCL : 0) | (O_NOFOLLOW ?? 0) | (O_NONBLOCK ?? 0);
  let fd: number;
  try {
    fd = openSync(path, flags, 0o600);
  } catch (error) {
    // O_NOFOLLOW on a symlink fails with ELOOP (EMLINK on some BSDs).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "EMLINK") throw new UnsafeFileError(path, "a symlink");
    // A FIFO opened for writing with O_NONBLOCK and no reader fails with ENXIO instead of blocking.
    if (code === "ENXIO") throw new UnsafeFileError(path, "a FIFO");
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UnsafeFileError(path, kindOf(stats));
    if (stats.nlink > 1) throw new UnsafeFileError(path, `hard-linked (${stats.nlink} links)`);
    return { fd, stats };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Makes sure `dir` is a real directory (not a symlink to one, not a file), creating it when it is
 * missing. Throws {@link UnsafeFileError} otherwise.
 */
export function ensureRealDirectory(dir: string): void {
  let stats: Stats;
  try {
    stats = lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    mkdirSync(dir, { recursive: true });
    stats = lstatSync(dir);
  }
  if (stats.isSymbolicLink()) throw new UnsafeFileError(dir, "a symlink");
  if (!stats.isDirectory()) throw new UnsafeFileError(dir, kindOf(stats));
}

/**
 * True for the errors that mean "no descriptor is free right now" (`EMFILE`: this process's
 * limit; `ENFILE`: the system's), which fail one command rather than the host.
 */
export function isDescriptorExhaustion(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "EMFILE" || code === "ENFILE";
}
