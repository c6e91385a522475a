/**
 * `await using` on clients and spawned hosts: leaving the block closes the client, and stops a
 * spawned host (real process), also when the block throws. Where a runtime has no
 * Symbol.asyncDispose (older browsers), the key is Symbol.for("Symbol.asyncDispose"), which
 * downlevelled `await using` looks up.
 */
import { runInNewContext } from "node:vm";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { connect, type MspClient } from "../../src/index.js";
import { createLinkedPair } from "../../src/testing/index.js";
import { spawnReferenceHost } from "../../src/node/index.js";
import type { SpawnedHost } from "../../src/node/index.js";
import { processGone as isProcessGone } from "../helpers/processGone.js";
import { repoRoot } from "../helpers/repoRoot.js";

/** A client on one end of an in-memory pair, and a flag that turns true when it closes. */
function pairedClient(): { client: MspClient; closed: () => boolean } {
  const [clientSide] = createLinkedPair();
  const client = connect(clientSide);
  let closed = false;
  client.events.on("close", () => (closed = true));
  return { client, closed: () => closed };
}

/**
 * Bundle a probe module (TypeScript, resolved from the repo root) as an IIFE exposing `probe`,
 * for ES2022: no native `await using`, so esbuild lowers it the way an app's build would.
 */
async function bundleProbe(contents: string): Promise<string> {
  const bundled = await build({
    stdin: { contents, resolveDir: repoRoot, loader: "ts" },
    bundle: true,
    write: false,
    format: "iife",
    globalName: "probe",
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
  });
  return bundled.outputFiles[0]?.text ?? "";
}

describe("await using", () => {
  it("MspClient: leaving the block closes it, and pending work settles connectionClosed", async () => {
    let closed: () => boolean;
    let pending: Promise<unknown>;
    {
      const made = pairedClient();
      await using client = made.client;
      closed = made.closed;
      pending = client.command("host/info", {}).catch((e: unknown) => e);
      expect(closed()).toBe(false);
    }
    expect(closed()).toBe(true);
    expect(await pending).toMatchObject({ kind: "connectionClosed" });
  });

  it("MspClient: a block that throws still closes it, and the block's error is the one that surfaces", async () => {
    let closed = () => false;
    const run = async () => {
      const made = pairedClient();
      await using client = made.client;
      closed = made.closed;
      void client;
      throw new Error("the app failed");
    };
    await expect(run()).rejects.toThrow("the app failed");
    expect(closed()).toBe(true);
  });

  it("SpawnedHost: leaving the block stops the host process, also when the block throws", async () => {
    let first: SpawnedHost | undefined;
    {
      await using host = spawnReferenceHost({ stderr: "ignore" });
      first = host;
      const { sessionId } = await host.command("session/create", {});
      expect(sessionId).toBeTypeOf("string");
      expect(isProcessGone(host.pid)).toBe(false);
    }
    expect(first.process.exitCode ?? first.process.signalCode).not.toBeNull();
    expect(isProcessGone(first.pid)).toBe(true);

    let second: SpawnedHost | undefined;
    const run = async () => {
      await using host = spawnReferenceHost({ stderr: "ignore" });
      second = host;
      await host.command("host/info", {});
      throw new Error("the app failed");
    };
    await expect(run()).rejects.toThrow("the app failed");
    expect(second?.process.exitCode ?? second?.process.signalCode).not.toBeNull();
    expect(isProcessGone(second!.pid)).toBe(true);
  });

  it("uses Symbol.asyncDispose when the runtime has it", () => {
    const { client } = pairedClient();
    expect(typeof client[Symbol.asyncDispose]).toBe("function");
    void client.close();
  });

  it("in a runtime without Symbol.asyncDispose, downlevelled `await using` still disposes (the key is Symbol.for)", async () => {
    // A realm of its own: Node's polyfilled Symbol.asyncDispose is only on the main realm's Symbol.
    expect(runInNewContext("typeof Symbol.asyncDispose")).toBe("undefined");
    const code = await bundleProbe(
      `
          import { asyncDispose } from "./src/internal/asyncDispose.ts";
          class Resource { disposed = false; async [asyncDispose]() { this.disposed = true; } }
          export async function run() {
            const resource = new Resource();
            { await using held = resource; void held; }
            return { disposed: resource.disposed, registered: asyncDispose === Symbol.for("Symbol.asyncDispose") };
          }`,
    );
    expect(code).toContain("Symbol.for"); // the lowering's own fallback lookup
    const result: unknown = await runInNewContext(`${code}; probe.run()`);
    expect(JSON.parse(JSON.stringify(result))).toEqual({ disposed: true, registered: true });
  });

  it("in a runtime without Symbol.asyncDispose, downlevelled `await using` closes an MspClient", async () => {
    const code = await bundleProbe(
      `
          import { connect } from "./src/index.ts";
          import { createLinkedPair } from "./src/testing/linkedPair.ts";
          export async function run() {
            const [clientSide] = createLinkedPair();
            let closed = false;
            {
              await using client = connect(clientSide);
              client.events.on("close", () => (closed = true));
            }
            return { closed, native: typeof Symbol.asyncDispose };
          }`,
    );
    // A realm of its own, given only the web APIs the client core uses.
    const webApis = {
      AbortController,
      AbortSignal,
      EventTarget,
      Event,
      DOMException,
      TextEncoder,
      TextDecoder,
      setTimeout,
      clearTimeout,
      queueMicrotask,
      crypto,
      console,
    };
    const result: unknown = await runInNewContext(`${code}; probe.run()`, webApis);
    expect(JSON.parse(JSON.stringify(result))).toEqual({ closed: true, native: "undefined" });
  });
});
