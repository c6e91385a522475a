/** Who may talk to the WebSocket host: the bind address rule, the Host and Origin checks, and the token compare. */
import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";

/** The address `--ws PORT` binds when none is given. */
export const DEFAULT_WS_ADDRESS = "127.0.0.1";

/** The names a browser on this machine may use for a loopback host, in a Host header or an Origin. */
const LOOPBACK_NAMES: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];

/** `[ADDR:]PORT` parsed: `8080`, `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:0`. */
export interface ListenAddress {
  /** An IP literal (IPv6 without brackets) or `localhost`. */
  address: string;
  /** The port, 0 for any free one. @unit TCP port */
  port: number;
}

/** Parses `--ws [ADDR:]PORT`. Throws an `Error` with a one-line message on bad input. */
export function parseListenAddress(spec: string): ListenAddress {
  const match = /^(?:(\[[0-9A-Fa-f:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(spec);
  const port = Number(match?.[2]);
  if (match === null || !Number.isInteger(port) || port > 65535) throw new Error(`--ws needs [ADDR:]PORT (PORT 0..65535), got ${JSON.stringify(spec)}`);
  const raw = match[1] ?? DEFAULT_WS_ADDRESS;
  const address = raw.startsWith("[") ? raw.slice(1, -1) : raw;
  if (address !== "localhost" && isIP(address) === 0) throw new Error(`--ws needs an IP address or localhost before the port, got ${JSON.stringify(raw)}`);
  return { address, port };
}

/** Whether `address` (an IP literal or `localhost`) is a loopback address. */
export function isLoopbackAddress(address: string): boolean {
  if (address === "localhost" || address === "::1") return true;
  if (isIP(address) === 4) return address.startsWith("127.");
  return /^::ffff:127\./i.test(address);
}

/** `address` as it appears in a URL or a Host header: IPv6 in brackets. */
export function urlHost(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address;
}

function isWildcard(address: string): boolean {
  return address === "0.0.0.0" || address === "::";
}

/**
 * The `Host` header values the host accepts, each with the port: the loopback names, and the bound
 * address (for a wildcard bind, every address of this machine's interfaces). A DNS name is never
 * accepted, which is what defeats DNS rebinding: a page at `evil.example` that made its name resolve
 * to 127.0.0.1 still sends `Host: evil.example:PORT`.
 */
export function allowedHosts(address: string, port: number): ReadonlySet<string> {
  const names = new Set(LOOPBACK_NAMES);
  if (isWildcard(address)) {
    for (const list of Object.values(networkInterfaces())) {
      for (const entry of list ?? []) names.add(urlHost(entry.address));
    }
  } else {
    names.add(urlHost(address));
  }
  return new Set([...names].map((name) => `${name}:${port}`.toLowerCase()));
}

/**
 * The `Origin` header values the host accepts: its own origins (`http://` + each allowed Host) and
 * every `--allow-origin`, normalized by `new URL(origin).origin`. Throws on an `--allow-origin`
 * that is not an origin (`scheme://host[:port]`, no path).
 */
export function allowedOrigins(hosts: ReadonlySet<string>, extra: readonly string[]): ReadonlySet<string> {
  const origins = new Set([...hosts].map((host) => `http://${host}`));
  for (const origin of extra) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new Error(`--allow-origin needs an origin like http://localhost:5173, got ${JSON.stringify(origin)}`);
    }
    if (url.origin === "null" || (url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "" || url.username !== "")
      throw new Error(`--allow-origin needs an origin like http://localhost:5173 (no path), got ${JSON.stringify(origin)}`);
    origins.add(url.origin);
  }
  return origins;
}

/** Whether a request's `Origin` header passes: absent (not a browser) or in `origins`. */
export function originAllowed(header: string | undefined, origins: ReadonlySet<string>): boolean {
  if (header === undefined) return true;
  let origin: string;
  try {
    origin = new URL(header).origin;
  } catch {
    return false;
  }
  return origins.has(origin);
}

/** Whether a request's `Host` header names one of `hosts` (case-insensitive). */
export function hostAllowed(header: string | undefined, hosts: ReadonlySet<string>): boolean {
  return header !== undefined && hosts.has(header.toLowerCase());
}

/** Whether a request's URL carries a query string (a token there would land in logs and history). */
export function hasQuery(url: string | undefined): boolean {
  return url !== undefined && url.includes("?");
}

/**
 * A constant-time token check: both sides are hashed (SHA-256) first, so the compare runs over
 * equal-length digests whatever the lengths, and `timingSafeEqual` never throws or leaks the length.
 */
export function tokenChecker(expected: string): (given: string | undefined) => boolean {
  const want = createHash("sha256").update(expected, "utf8").digest();
  return (given) => {
    const got = createHash("sha256")
      .update(given ?? "", "utf8")
      .digest();
    return timingSafeEqual(want, got) && given !== undefined;
  };
}
