/** `--ws`'s WebSocket class: the runtime's own, else the `ws` package, loaded only when needed; missing, it is one clear line. */
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { WebSocketConstructor } from "../../src/websocket/index.js";
import { resolveWebSocketClass } from "../../packages/host/src/cli/webSocketClass.js";

const NO_SUCH_PACKAGE = "@muse-code/no-such-package-for-this-test";

describe("resolveWebSocketClass", () => {
  it("takes the runtime's own class without loading anything", async () => {
    const builtIn = class {} as unknown as WebSocketConstructor;
    const loaded: string[] = [];
    expect(
      await resolveWebSocketClass(builtIn, (name) => {
        loaded.push(name);
        return Promise.resolve({});
      }),
    ).toBe(builtIn);
    expect(loaded).toEqual([]);
  });

  it("loads the ws package when the runtime has no WebSocket", async () => {
    const loaded: string[] = [];
    const found = await resolveWebSocketClass(undefined, async (name) => {
      loaded.push(name);
      return import("ws");
    });
    expect(loaded).toEqual(["ws"]);
    expect(found).toBe(WebSocket);
  });

  it("without ws installed, fails with one line naming the package and how to install it", async () => {
    // A package that is not installed, loaded as the CLI loads ws: a real import() of a bare name.
    const error = await resolveWebSocketClass(undefined, (name) => import(name === "ws" ? NO_SUCH_PACKAGE : name)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(/^--ws needs the package "ws" \(Node v\d+\.\d+\.\d+ has no WebSocket of its own\): npm install ws$/);
    expect(message).not.toContain("\n");
    expect((error as Error & { cause: { code?: string } }).cause.code).toBe("ERR_MODULE_NOT_FOUND");
  });

  it("with a ws that cannot be loaded or has no WebSocket, says so", async () => {
    await expect(resolveWebSocketClass(undefined, () => Promise.reject(new SyntaxError("Unexpected token")))).rejects.toThrow(
      '--ws cannot load the package "ws": Unexpected token',
    );
    await expect(resolveWebSocketClass(undefined, () => Promise.resolve({}))).rejects.toThrow(
      '--ws cannot use the package "ws": it exports no WebSocket class',
    );
  });
});
