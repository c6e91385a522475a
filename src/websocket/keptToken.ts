/**
 * keptToken: a page's host token, read from the address's fragment (`#token=…`) once, kept in the
 * storage the app chooses for later loads, and taken out of the address bar at once. Browser-safe.
 */

/** Default storage key of the kept token. */
const DEFAULT_KEY = "muse:token";
/** Default fragment parameter that carries the token. */
const DEFAULT_PARAM = "token";

/**
 * Where {@link keptToken} keeps the token: `sessionStorage` (this tab, across reloads),
 * `localStorage` (every tab, until cleared), or any object with the same two methods (a
 * `KeyValueStorage` of `@muse-code/sdk/session` is one).
 *
 * @example
 * ```ts
 * const storage: TokenStorage = window.sessionStorage;
 * ```
 */
export interface TokenStorage {
  /** The value kept under `key`, or null when there is none. */
  getItem(key: string): string | null;
  /** Keep `value` under `key`; may throw (a full quota, a disabled storage). */
  setItem(key: string, value: string): void;
}

/**
 * Options of {@link keptToken}.
 *
 * @example
 * ```ts
 * const options: KeptTokenOptions = { storage: localStorage, key: "chat:token" };
 * const kept = keptToken(options);
 * ```
 */
export interface KeptTokenOptions {
  /** Where the token is kept for the page's later loads. */
  storage: TokenStorage;
  /**
   * The storage key.
   * @defaultValue "muse:token"
   */
  key?: string;
  /**
   * The fragment parameter that carries the token (`#token=…`, as the host prints the page's address).
   * @defaultValue "token"
   */
  param?: string;
  /** The page's address. Default: the global `location` (a browser's); pass one where there is none. */
  location?: { readonly hash: string; readonly pathname: string; readonly search: string };
  /** The page's history, whose `replaceState` takes the token out of the address bar. Default: the global `history`. */
  history?: {
    readonly state: unknown;
    /** Replace the current entry's address with `url`, keeping `data` as its state (the browser's own `history.replaceState`). */
    replaceState(data: unknown, unused: string, url?: string | URL | null): void;
  };
  /** Told when the token could not be kept (the storage threw) or not taken out of the address bar. Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

/**
 * The page's host token. On the load whose address carries it in the fragment (`#token=…`, as the
 * host prints it), it is read, kept in `storage`, and taken out of the address bar with
 * `history.replaceState` (path, query, history state and any other fragment parameters stay as
 * they were), so it is in no bookmark, no shared link and no later history entry; the fragment
 * never reaches a server. On a later load (a reload, a link within the app) the kept one is
 * returned. A token in the address wins over a kept one, so opening the host's new address after
 * a token change just works.
 *
 * A storage that throws does not stop the page: the token is returned for this load and
 * `onWarning` says it was not kept (or could not be read). An empty `#token=` is taken out of the
 * address and reads as none. Throws a TypeError for a bad option, or when the runtime has no
 * `location` or `history` and none was passed.
 *
 * @param options - The storage to keep it in, and optionally the key, the fragment parameter, the page's location and history.
 * @returns The token, or undefined when neither the address nor the storage has one.
 *
 * @example
 * ```ts
 * import { connectWebSocket, keptToken } from "@muse-code/sdk/websocket";
 *
 * // Opened at http://127.0.0.1:8080/#token=…; the address bar then reads http://127.0.0.1:8080/
 * const token = keptToken({ storage: sessionStorage });
 * const client = await connectWebSocket(`ws://${location.host}/msp`, { token });
 * ```
 */
export function keptToken(options: KeptTokenOptions): string | undefined {
  if (typeof options !== "object" || options === null)
    throw new TypeError("keptToken: options must be an object with a storage (sessionStorage, localStorage, …)");
  const { storage, key = DEFAULT_KEY, param = DEFAULT_PARAM } = options;
  if (typeof storage !== "object" || storage === null || typeof storage.getItem !== "function" || typeof storage.setItem !== "function")
    throw new TypeError("keptToken: storage must have getItem and setItem (sessionStorage, localStorage, or a KeyValueStorage)");
  if (typeof key !== "string" || key === "") throw new TypeError(`keptToken: key must be a non-empty string, got ${JSON.stringify(key)}`);
  if (typeof param !== "string" || param === "" || /[=&#]/.test(param))
    throw new TypeError(`keptToken: param must be a non-empty string without "=", "&" or "#", got ${JSON.stringify(param)}`);
  const onWarning = options.onWarning ?? ((message: string) => console.warn(`@muse-code/sdk/websocket: ${message}`));
  if (typeof onWarning !== "function") throw new TypeError("keptToken: onWarning must be a function");
  const location = options.location ?? (globalThis as { location?: KeptTokenOptions["location"] }).location;
  const history = options.history ?? (globalThis as { history?: KeptTokenOptions["history"] }).history;
  if (typeof location !== "object" || location === null || typeof location.hash !== "string")
    throw new TypeError("keptToken: this runtime has no location: pass options.location (with hash, pathname and search)");
  if (typeof history !== "object" || history === null || typeof history.replaceState !== "function")
    throw new TypeError("keptToken: this runtime has no history: pass options.history (with replaceState)");

  const kept = (): string | undefined => {
    try {
      return storage.getItem(key) || undefined;
    } catch (error) {
      onWarning(`the kept token could not be read: ${String(error)}`);
      return undefined;
    }
  };
  const fragment = splitFragment(location.hash, param);
  if (fragment === undefined) return kept();
  try {
    history.replaceState(history.state, "", `${location.pathname}${location.search}${fragment.rest}`);
  } catch (error) {
    onWarning(`the token could not be taken out of the address bar: ${String(error)}`);
  }
  if (fragment.token === "") return kept();
  try {
    storage.setItem(key, fragment.token);
  } catch (error) {
    onWarning(`the token could not be kept (a reload will need the host's address again): ${String(error)}`);
  }
  return fragment.token;
}

/** The token in `hash` under `param` (decoded, the first one), and the fragment without it; undefined when it has none. */
function splitFragment(hash: string, param: string): { token: string; rest: string } | undefined {
  const parts = hash.replace(/^#/, "").split("&");
  // One part holds at most one name (the parts are already split at "&"), so `has` asks for that name.
  const isToken = (part: string) => new URLSearchParams(part).has(param);
  const found = parts.find(isToken);
  if (found === undefined) return undefined;
  const rest = parts.filter((part) => !isToken(part) && part !== "").join("&");
  return { token: new URLSearchParams(found).get(param) ?? "", rest: rest === "" ? "" : `#${rest}` };
}
