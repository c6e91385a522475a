/**
 * Fault-suite harness: spawn a misbehaving child host (test/fixtures/faulty-hosts/scripted.mjs)
 * with the real spawnHost, make sure every child is killed after each test, and trap any
 * unhandled rejection so a test that lets one escape fails.
 */
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { MspError } from "../../src/index.js";
import { spawnHost, signalGroup, type SpawnedHost, type SpawnHostOptions } from "../../src/node/index.js";

/** The scripted faulty host. */
export const FAULTY_HOST = fileURLToPath(new URL("../fixtures/faulty-hosts/scripted.mjs", import.meta.url));

export type Action = [string, ...unknown[]];

const live = new Set<SpawnedHost>();

/** Spawn the scripted faulty host with `actions`; it is closed and killed after the test. */
export function spawnFaulty(actions: Action[], options: Omit<SpawnHostOptions, "command"> = {}): SpawnedHost {
  const host = spawnHost({ command: process.execPath, args: [FAULTY_HOST, JSON.stringify(actions)], stderr: "ignore", killGraceMs: 200, ...options });
  live.add(host);
  return host;
}

/** Close every host this test spawned and make sure its process group is gone. */
export async function closeAll(): Promise<void> {
  const hosts = [...live];
  live.clear();
  await Promise.all(
    hosts.map(async (host) => {
      await host.close();
      if (host.process.pid !== undefined) signalGroup(host.process.pid, "SIGKILL");
    }),
  );
}

/** Every unhandled rejection seen since the last check. */
export const escaped: unknown[] = [];
const trap = (reason: unknown) => escaped.push(reason);

/**
 * Install the trap for this file: an unhandled rejection during a test fails that test (and, run
 * under `--unhandled-rejections=strict` by `npm run test:faults`, the worker too).
 */
export function useFaultHarness(): void {
  beforeAll(() => {
    process.on("unhandledRejection", trap);
  });
  afterEach(async () => {
    await closeAll();
    // Let any rejection created during the test reach the trap (it is reported after a macrotask).
    await new Promise((resolve) => setTimeout(resolve, 5));
    const seen = escaped.splice(0);
    expect(seen, "unhandled rejections escaped").toEqual([]);
  });
  afterAll(() => {
    process.off("unhandledRejection", trap);
  });
}

/** Settle `promise` into what it became: `"resolved"` or the MspError (anything else is returned raw). */
export async function outcome<T>(promise: Promise<T>): Promise<{ value?: T; error?: MspError | unknown; at: number }> {
  try {
    const value = await promise;
    return { value, at: performance.now() };
  } catch (error) {
    return { error, at: performance.now() };
  }
}

/** Expect a connectionClosed MspError. */
export function expectClosed(error: unknown): MspError<"connectionClosed"> {
  expect(MspError.is(error), `expected an MspError, got ${String(error)}`).toBe(true);
  const e = error as MspError<"connectionClosed">;
  expect(e.kind).toBe("connectionClosed");
  return e;
}

/** Resolve when `host` has emitted at least `n` notifications. */
export function nextNotifications(host: SpawnedHost, n: number, timeoutMs = 5_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    const timer = setTimeout(() => reject(new Error(`no ${n} notifications within ${timeoutMs} ms`)), timeoutMs);
    const listener = () => {
      if (++seen >= n) {
        clearTimeout(timer);
        host.events.off("notification", listener);
        resolve();
      }
    };
    host.events.on("notification", listener);
  });
}
