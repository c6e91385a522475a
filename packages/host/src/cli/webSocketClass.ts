/**
 * webSocketClass: the WebSocket class `--ws` connects with: the runtime's own (Node ≥ 22), else
 * the `ws` package's (a dependency of this package), loaded only when `--ws` needs it.
 */
import type { WebSocketConstructor } from "@muse-code/sdk/websocket";

/** The package `--ws` needs on a runtime without a WebSocket of its own. */
const WS_PACKAGE = "ws";

/** Loads a package by name, as `import()` does: resolves with its module namespace. */
export type PackageLoader = (name: string) => Promise<unknown>;

// The name is a variable, so no bundler follows it: `ws` is loaded from node_modules at run time, or not at all.
const importPackage: PackageLoader = (name) => import(name);

/**
 * The WebSocket class for `--ws`: the global one when the runtime has it, else the `ws` package's
 * (Node 20). Rejects with a one-line `Error` when there is neither (see {@link resolveWebSocketClass}).
 */
export function webSocketClass(): Promise<WebSocketConstructor> {
  return resolveWebSocketClass((globalThis as { WebSocket?: WebSocketConstructor }).WebSocket, importPackage);
}

/**
 * `builtIn` when there is one, else `load("ws")`'s `WebSocket`. When `ws` is not installed, rejects
 * with `--ws needs the package "ws" (…): npm install ws`; when it is there but cannot be
 * loaded, with why.
 */
export async function resolveWebSocketClass(builtIn: WebSocketConstructor | undefined, load: PackageLoader): Promise<WebSocketConstructor> {
  if (builtIn !== undefined) return builtIn;
  let loaded: unknown;
  try {
    loaded = await load(WS_PACKAGE);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new Error(`--ws needs the package "${WS_PACKAGE}" (Node ${process.version} has no WebSocket of its own): npm install ${WS_PACKAGE}`, {
        cause: error,
      });
    }
    throw new Error(`--ws cannot load the package "${WS_PACKAGE}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const WebSocket = (loaded as { WebSocket?: unknown } | null)?.WebSocket;
  if (typeof WebSocket !== "function") throw new Error(`--ws cannot use the package "${WS_PACKAGE}": it exports no WebSocket class`);
  return WebSocket as WebSocketConstructor;
}
