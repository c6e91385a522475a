/**
 * The host's bearer token. `muse-host serve --ws --ui` prints the page's URL with the token in
 * the fragment (`#token=…`), which a browser never sends to a server. The page takes it once and
 * removes it from the address bar and the history entry, so it is not copied along with the URL,
 * and keeps it in `sessionStorage` (this tab's, gone when the tab closes), so a reload can
 * connect again. The session layer keeps the session, not the token.
 */

/** Where the token is kept in the tab's storage. */
export const TOKEN_KEY = "muse-demo:token";

/** Reads `#token=…` from `location.hash` and replaces the history entry with the same URL minus the fragment. */
export function takeTokenFromAddress(): string | undefined {
  const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
  if (location.hash !== "") history.replaceState(history.state, "", location.pathname + location.search);
  return token === "" ? undefined : token;
}

/**
 * The token for this tab: the one in the address (kept in `storage` for the next reload), else
 * the one kept by an earlier load. Without a storage (disabled), only the address has it.
 */
export function tokenForThisTab(storage: Storage | undefined): string | undefined {
  const fromAddress = takeTokenFromAddress();
  try {
    if (fromAddress !== undefined) storage?.setItem(TOKEN_KEY, fromAddress);
    return fromAddress ?? storage?.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return fromAddress; // storage refused (a full quota): this load still connects
  }
}
