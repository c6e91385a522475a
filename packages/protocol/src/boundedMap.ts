/**
 * BoundedMap: a Map with a capacity that forgets its oldest entries first. The one bounded table
 * of the SDK and the reference host (a pure data structure, so the host may import it too).
 */

/** Options of a {@link BoundedMap}. */
export interface BoundedMapOptions<K, V> {
  /** How many entries to keep; the oldest beyond it are evicted. At least 1 (`Infinity` for no bound). */
  capacity: number;
  /**
   * What "oldest" means. `"insertion"` (the default): first set, as a `Map` orders keys; setting an
   * existing key again keeps its place. `"recency"`: least recently set; setting a key again makes it
   * the newest. Reading never reorders.
   * @defaultValue "insertion"
   */
  order?: "insertion" | "recency";
  /** Called with each entry the capacity evicts (never for `delete` or `clear`). */
  onEvict?: (key: K, value: V) => void;
}

const NONE = Symbol();

/** A Map bounded by `capacity`: once full, setting a new key evicts the oldest entry. */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #capacity: number;
  readonly #recency: boolean;
  readonly #onEvict: ((key: K, value: V) => void) | undefined;
  /** The last key in the map's order (or NONE) and its value: setting or reading it again skips the hash table. */
  #newest: unknown = NONE;
  #newestValue: unknown;

  constructor(options: BoundedMapOptions<K, V>) {
    if (!(options.capacity >= 1)) throw new RangeError(`capacity must be at least 1, got ${options.capacity}`);
    this.#capacity = options.capacity;
    this.#recency = options.order === "recency";
    this.#onEvict = options.onEvict;
  }

  /** The bound on {@link BoundedMap.size}. */
  get capacity(): number {
    return this.#capacity;
  }

  /** Number of entries held. */
  get size(): number {
    return this.#entries.size;
  }

  /** The value of `key`, or `undefined`. Does not reorder. */
  get(key: K): V | undefined {
    return key === this.#newest ? (this.#newestValue as V) : this.#entries.get(key);
  }

  /** True when `key` is held. */
  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Set `key` (see {@link BoundedMapOptions.order} for where it goes), then evict the oldest beyond capacity. */
  set(key: K, value: V): this {
    // The newest key set again to its value: nothing to store, nothing to reorder, nothing to evict.
    if (key === this.#newest && value === this.#newestValue) return this;
    const size = this.#entries.size;
    if (this.#recency) this.#entries.delete(key);
    // A key new to the map goes last; so does every key set with order "recency".
    if (this.#entries.set(key, value).size > size || this.#recency || key === this.#newest) {
      this.#newest = key;
      this.#newestValue = value;
    }
    while (this.#entries.size > this.#capacity) {
      const [oldestKey, oldestValue] = this.#entries.entries().next().value as [K, V];
      this.#entries.delete(oldestKey);
      this.#onEvict?.(oldestKey, oldestValue);
    }
    return this;
  }

  /** Remove `key`; true when it was held. */
  delete(key: K): boolean {
    if (key === this.#newest) this.#newest = this.#newestValue = NONE;
    return this.#entries.delete(key);
  }

  /** Remove every entry. */
  clear(): void {
    this.#newest = this.#newestValue = NONE;
    this.#entries.clear();
  }

  /** The values, oldest first. */
  values(): IterableIterator<V> {
    return this.#entries.values();
  }

  /** The entries, oldest first. */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.#entries[Symbol.iterator]();
  }
}
