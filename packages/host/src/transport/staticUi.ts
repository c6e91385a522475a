/** The `--ui` file server: the Stop-button app's built files, GET/HEAD only, fixed content types, regular files only, nothing outside its directory. */
import { constants, realpathSync, statSync } from "node:fs";
import { lstat, open } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The content type of each extension served; any other file is a 404. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/** The largest file served. @unit bytes */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** Headers on every answer: no sniffing, no framing by other pages, no referrer. */
const SAFE_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
} as const;

/**
 * Writes a short plain-text answer (errors, refusals) with the safe headers; `status` is an HTTP
 * status code, `text` is sent as UTF-8 with its `Content-Length` in bytes.
 */
export function plainAnswer(response: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...SAFE_HEADERS, ...headers, "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
  response.end(text);
}

/**
 * A request handler serving the files under `dir` (resolved once; it must exist and hold
 * `index.html`, else this throws). `/` is `index.html`. A path with `..`, a backslash or a NUL, a
 * file that resolves (links followed) outside `dir`, an extension not in the fixed table, or
 * anything that is not a regular file (a directory, a FIFO, a device, even through a link) is a
 * 404; a method other than GET or HEAD a 405. Files are checked before and after a non-blocking
 * open, so a FIFO never holds a thread-pool thread. Files over 16 MiB (bytes) are a 404 too.
 */
export function staticUi(dir: string | URL): (request: IncomingMessage, response: ServerResponse) => void {
  const given = typeof dir === "string" ? dir : fileURLToPath(dir);
  let root: string;
  try {
    root = realpathSync(given);
    if (!statSync(join(root, "index.html")).isFile()) throw new Error("not a file");
  } catch {
    throw new Error(`--ui: no index.html in ${given} (build the app with npm run build, or pass --ui-dir DIR)`);
  }
  return (request, response) => {
    if (request.method !== "GET" && request.method !== "HEAD") return plainAnswer(response, 405, "Method Not Allowed\n", { Allow: "GET, HEAD" });
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return plainAnswer(response, 404, "Not Found\n");
    }
    const relative = decoded === "/" || decoded === "" ? "index.html" : decoded.replace(/^\/+/, "");
    const type = CONTENT_TYPES[extname(relative).toLowerCase()];
    if (type === undefined || /(^|\/)\.\.(\/|$)|\\|\0/.test(relative)) return plainAnswer(response, 404, "Not Found\n");
    void serveFile(root, relative, type, request.method === "HEAD", response);
  };
}

async function serveFile(root: string, relative: string, type: string, headOnly: boolean, response: ServerResponse): Promise<void> {
  let real: string;
  try {
    real = realpathSync(join(root, relative));
  } catch {
    return plainAnswer(response, 404, "Not Found\n");
  }
  if (!real.startsWith(root + sep)) return plainAnswer(response, 404, "Not Found\n");
  let body: Buffer | undefined;
  try {
    body = await readRegularFile(real, MAX_FILE_BYTES);
  } catch {
    body = undefined;
  }
  if (body === undefined) return plainAnswer(response, 404, "Not Found\n");
  response.writeHead(200, { ...SAFE_HEADERS, "Content-Type": type, "Content-Length": body.length });
  response.end(headOnly ? undefined : body);
}

/**
 * The bytes of `path` (a resolved path, its last component no link) when it is a regular file
 * of at most `maxBytes` bytes, else `undefined`. A FIFO or device must never be opened by a
 * plain `open`: that blocks a thread-pool thread until a writer comes. So `lstat`
 * first; then open with `O_NONBLOCK` (a FIFO that slips in anyway opens at once) and
 * `O_NOFOLLOW` (a link swapped in fails with `ELOOP`); then `fstat` the descriptor, which must
 * still be a regular file, the same one `lstat` saw, before one byte is read.
 */
async function readRegularFile(path: string, maxBytes: number): Promise<Buffer | undefined> {
  const checked = await lstat(path);
  if (!checked.isFile() || checked.size > maxBytes) return undefined;
  const file = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  try {
    const opened = await file.stat();
    if (!opened.isFile() || opened.dev !== checked.dev || opened.ino !== checked.ino || opened.size > maxBytes) return undefined;
    // Read what fstat counted, no more: a file growing meanwhile cannot pass the bound.
    const body = Buffer.alloc(opened.size);
    let filled = 0;
    while (filled < body.length) {
      const { bytesRead } = await file.read(body, filled, body.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === body.length ? body : body.subarray(0, filled);
  } finally {
    await file.close();
  }
}
