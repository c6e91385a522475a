/**
 * What the public surface promises beyond its names (those are pinned by barrels.test.ts): the
 * read-only views of the client, and browser bundles free of Node.
 */
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import type { MspClient } from "../../src/index.js";
import { makePeer, SESSION, terminal } from "../helpers/peer.js";

describe("public surface", () => {
  it("client.turns and client.items are read-only views: get and terminalOf, itemsOf and get, nothing that writes", async () => {
    const { client, send } = makePeer();
    const readOnly = (c: MspClient) => {
      // @ts-expect-error only the connection records terminals
      void c.turns.record;
      // @ts-expect-error only the connection settles waiters on close
      void c.turns.closeAll;
      // @ts-expect-error only the connection applies items
      void c.items.apply;
      // @ts-expect-error only the connection closes a turn's items
      void c.items.closeTurn;
      return [c.turns.get("t")?.terminal, c.items.itemsOf("t").length, c.items.get("t", "i")];
    };
    send({
      jsonrpc: "2.0",
      method: "item/started",
      params: {
        sessionId: SESSION,
        viewCursor: `v:${SESSION}:1`,
        item: { itemId: "i", kind: "message", turnId: "t", revision: 1, status: "inProgress", text: "" },
      },
    });
    send(terminal("t", 2));
    expect((await client.turns.terminalOf("t", { timeoutMs: 1_000 })).terminal).toBe("completed");
    expect(readOnly(client)).toEqual(["completed", 1, expect.objectContaining({ status: "cancelled", synthesized: true })]);
    // Not only in the type: the objects have no writers to reach by a cast either.
    for (const view of [client.turns, client.items] as unknown as Array<Record<string, unknown>>) {
      expect(Object.isFrozen(view)).toBe(true);
      for (const writer of ["record", "closeAll", "apply", "closeTurn"]) expect(view[writer]).toBeUndefined();
    }
    await client.close();
  });

  // Its size is a benchmark target (npm run bench), not a unit test.
  it.each(["src/index.ts", "src/framing/index.ts", "src/websocket/index.ts", "src/ui/index.ts", "src/session/index.ts"])(
    "the browser bundle of %s imports no node: module and nothing Node-only of ours",
    async (entry) => {
      const out = await build({
        entryPoints: [entry],
        bundle: true,
        platform: "browser",
        format: "esm",
        minify: true,
        write: false,
        metafile: true,
        logLevel: "silent",
      });
      const inputs = Object.keys(out.metafile.inputs);
      expect(inputs.filter((i) => i.startsWith("node:") || /(^|\/)src\/(node|host|testing)\//.test(i))).toEqual([]);
      const code = out.outputFiles[0]?.contents ?? new Uint8Array();
      expect(new TextDecoder().decode(code)).not.toMatch(/from\s*"node:|require\("node:/);
    },
  );
});
