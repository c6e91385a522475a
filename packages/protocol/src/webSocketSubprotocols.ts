/**
 * MSP over WebSocket, the part both sides must agree on: the subprotocols a client offers in
 * `Sec-WebSocket-Protocol`. A browser cannot set headers, so the bearer token travels as one of
 * them (never in the URL), base64url-encoded, as Kubernetes' `base64url.bearer.authorization.k8s.io.<token>` does.
 */

/**
 * The subprotocol of MSP over WebSocket: one JSON-RPC 2.0 message per text frame. A client always
 * offers it first, and the host must select it (and never the bearer entry, which would echo the
 * token back in the response headers).
 */
export const MSP_SUBPROTOCOL = "msp.v1";

/** The prefix of the subprotocol entry that carries the bearer token: `bearer.msp.<base64url(UTF-8 token), unpadded>`. */
export const BEARER_SUBPROTOCOL_PREFIX = "bearer.msp.";

/**
 * The subprotocol entry that carries `token`. Subprotocol names are RFC 7230 tokens (no spaces,
 * no `=`, no separators), so the token's UTF-8 bytes are base64url-encoded without padding.
 * Throws a TypeError when the token is not a non-empty string.
 */
export function bearerSubprotocol(token: string): string {
  if (typeof token !== "string" || token.length === 0) throw new TypeError("token must be a non-empty string");
  let binary = "";
  for (const byte of new TextEncoder().encode(token)) binary += String.fromCharCode(byte);
  return BEARER_SUBPROTOCOL_PREFIX + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The bearer token a client offered, read from its `Sec-WebSocket-Protocol` entries (for hosts),
 * or `undefined` when none is offered, more than one is, or the entry is not valid unpadded
 * base64url of UTF-8 text.
 */
export function bearerTokenOf(offered: Iterable<string>): string | undefined {
  const entries = [...offered].filter((entry) => entry.startsWith(BEARER_SUBPROTOCOL_PREFIX));
  if (entries.length !== 1) return undefined;
  const encoded = (entries[0] as string).slice(BEARER_SUBPROTOCOL_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded) || encoded.length % 4 === 1) return undefined;
  try {
    const binary = atob(encoded.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    const token = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return token.length === 0 ? undefined : token;
  } catch {
    return undefined;
  }
}
