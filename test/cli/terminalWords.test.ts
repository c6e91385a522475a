/**
 * `muse run` and `muse resume` say how a turn ended in `describeTerminal`'s words (issue 22), over
 * real reference hosts: a policy stop (the model's time limit), a host that shuts down mid-tool
 * (SIGTERM, over --ws), and a host that restarted after a crash (SIGKILL, then `muse resume`).
 * The user's own Stop ("you stopped it") is in ctrlC.test.ts, approve.test.ts and webSocket.test.ts.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { startWsHost, type WsHost } from "../helpers/wsHost.js";
import { hostCommand, runMuse, startMuse, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const normalise = (text: string) => text.replace(/after \d+\.\d s/g, "after <s> s");
const runTests = join(repoRoot, "packages/host/models/run-tests.json");
const hosts: WsHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
});

async function wsHost(): Promise<{ host: WsHost; ws: string[] }> {
  const host = await startWsHost(runTests);
  hosts.push(host);
  return { host, ws: ["--ws", `ws://127.0.0.1:${host.port}/msp`, "--token-file", join(host.dataDir, "token")] };
}

describe("the terminal line in describeTerminal's words", () => {
  it("a turn the model's time limit stops reads 'stopped by policy: turn time limit (400 ms)', not the user's Stop", async () => {
    const model = JSON.stringify(join(repoRoot, "test/fixtures/models/time-limited.json"));
    const result = await runMuse(bundles(), ["run", "go", "--spawn", hostCommand(bundles(), `--script ${model}`)]);
    const last = normalise(result.stdout).trimEnd().split("\n").at(-1);
    expect(last).toBe("turn cancelled: stopped by policy: turn time limit (400 ms) (cancelled during tool execution) after <s> s");
    expect(result.code).toBe(130);
  });

  it("a host that shuts down mid-tool (SIGTERM) reads 'the host shut down'", async () => {
    const { host, ws } = await wsHost();
    const muse = startMuse(bundles(), ["run", "run the tests", ...ws]);
    await muse.waitFor((out) => out.includes("test 2 ... ok"), 20_000);
    await host.stop();
    const result = await muse.result;
    const last = normalise(muse.output()).trimEnd().split("\n").at(-1);
    expect(last, muse.output()).toBe("turn cancelled: the host shut down (cancelled during tool execution) after <s> s");
    expect(result.code).toBe(130);
  });

  it("a turn a crashed host's successor closes reads 'the host restarted' in muse resume", async () => {
    const { host, ws } = await wsHost();
    const muse = startMuse(bundles(), ["run", "run the tests", "--json", ...ws]);
    await muse.waitFor((out) => out.includes("test 2 ... ok"), 20_000);
    const sessionId = (JSON.parse(muse.output().split("\n")[0] as string) as { sessionId: string }).sessionId;
    await host.crash();
    await muse.result;
    await host.restart();
    const resumed = await runMuse(bundles(), ["resume", "--session", sessionId, ...ws]);
    const last = normalise(resumed.stdout).trimEnd().split("\n").at(-1);
    expect(last, resumed.stdout).toBe("turn failed: the host restarted after <s> s");
    expect(resumed.code).toBe(1);
  });
});
