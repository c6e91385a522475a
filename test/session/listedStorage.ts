/**
 * A memory KeyValueStorage whose keys can be listed: what a session keeps over several keys, and
 * how many characters it keeps, can be read back by a test.
 */
import type { KeyValueStorage } from "../../src/session/index.js";

/** A KeyValueStorage in a Map, with its keys and its total characters (keys not counted). */
export interface ListedStorage extends KeyValueStorage {
  readonly values: ReadonlyMap<string, string>;
  /** The characters of every value. @unit UTF-16 code units */
  total(): number;
}

/** A new, empty {@link ListedStorage}. */
export function listedStorage(): ListedStorage {
  const values = new Map<string, string>();
  return {
    values,
    getItem: (key) => values.get(key) ?? null,
    setItem: (key, value) => void values.set(key, String(value)),
    removeItem: (key) => void values.delete(key),
    total: () => [...values.values()].reduce((sum, value) => sum + value.length, 0),
  };
}
