/**
 * The host's bearer token. `muse-host serve --ws --ui` prints the page's URL with the token in
 * the fragment (`#token=…`), which a browser never sends to a server. The page takes it once and
 * removes it from the address bar and the history entry, so it is not copied along with the URL.
 */

/** Reads `#token=…` from `location.hash` and replaces the history entry with the same URL minus the fragment. */
export function takeTokenFromAddress(): string | undefined {
  const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
  if (location.hash !== "") history.replaceState(history.state, "", location.pathname + location.search);
  return token === "" ? undefined : token;
}
