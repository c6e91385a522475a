/**
 * fileStorage: a `KeyValueStorage` (the part of Web Storage a session uses) kept in one JSON file,
 * so a Node program's session outlives the process as a page's outlives a reload.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { KeyValueStorage } from "../session/sessionStorage.js";

/**
 * A {@link KeyValueStorage} in the JSON file at `path` (created with its directory when missing).
 * Each `setItem` writes the whole file to a temporary file beside it and renames it into place,
 * so a crash never leaves half a file; a file that is not a JSON object reads as empty.
 * Errors (a full disk, no permission) are thrown to the caller: a session then goes on in memory
 * and says so once.
 *
 * @example
 * ```ts
 * import { fileStorage } from "@muse-code/sdk/node";
 * import { openSession } from "@muse-code/sdk/session";
 * import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";
 * const chat = await openSession({ connect: async () => spawnReferenceHost({ script: exampleModelPath("hello") }), storage: fileStorage(".muse/session.json") });
 * ```
 */
export function fileStorage(path: string): KeyValueStorage {
  if (typeof path !== "string" || path === "") throw new TypeError("fileStorage: path must be a non-empty string");
  const read = (): Record<string, string> => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
    try {
      const value: unknown = JSON.parse(text);
      return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, string>) : {};
    } catch {
      return {};
    }
  };
  const write = (values: Record<string, string>): void => {
    mkdirSync(dirname(path), { recursive: true });
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(values));
    renameSync(temp, path);
  };
  return {
    getItem: (key) => {
      const value = read()[key];
      return typeof value === "string" ? value : null;
    },
    setItem: (key, value) => write({ ...read(), [key]: String(value) }),
    removeItem: (key) => {
      const values = read();
      delete values[key];
      write(values);
    },
  };
}
