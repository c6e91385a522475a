/**
 * The host's own temp data dir (no `--data`): created under the OS temp dir and removed again,
 * when the host shuts down or, at the latest, when the process exits (signals the CLI handles,
 * a fatal error, `process.exit`). Only a SIGKILL leaves it behind.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A temp data dir this process created and will remove. */
export interface TempDataDir {
  readonly path: string;
  /** Remove it now (idempotent; a failure is ignored, the dir is temporary anyway). */
  remove(): void;
}

/** Dirs still to remove when the process exits: one `exit` listener for all of them. */
const pending = new Set<string>();

function removeAll(): void {
  for (const path of pending) removeQuietly(path);
  pending.clear();
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // Best effort: it lives under the OS temp dir.
  }
}

/** Creates `<tmpdir>/muse-host-XXXXXX` and arranges for it to be removed. */
export function createTempDataDir(): TempDataDir {
  const path = mkdtempSync(join(tmpdir(), "muse-host-"));
  if (pending.size === 0) process.on("exit", removeAll);
  pending.add(path);
  return {
    path,
    remove() {
      if (!pending.delete(path)) return;
      removeQuietly(path);
      if (pending.size === 0) process.off("exit", removeAll);
    },
  };
}
