/**
 * `muse resume` with subagents (issue 23), as real processes against one in-process reference
 * host shared over WebSocket: a session whose child turn waits on an approval question outlives
 * the muse that started it; `muse resume` of the parent session shows the child's live
 * notifications nested under its name, answers the child's question (saying which subagent asks),
 * and exits on the parent's own terminal.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHost } from "../../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { runMuse, startMuse, tempDir, useMuseBundles } from "./museProcess.js";
import { serveSharedHost } from "./sharedHostServer.js";

const bundles = useMuseBundles();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("muse resume of a session with a subagent", () => {
  it("shows the child's live notifications nested and answers its question, saying which subagent asks", async () => {
    const temp = tempDir("muse-subagent-resume-");
    cleanups.push(temp.remove);
    const marker = join(temp.dir, "cleaned");
    const model = join(temp.dir, "model.json");
    writeFileSync(
      model,
      JSON.stringify({
        turns: [
          { steps: [{ text: "Delegating the cleanup.", toolCalls: [{ tool: "task", args: { prompt: "clean up", agent: "cleaner" } }] }, { text: "Cleaned." }] },
        ],
        agents: {
          cleaner: {
            turns: [
              {
                steps: [
                  { text: "Cleaning.", toolCalls: [{ tool: "shell", args: { command: `touch ${marker}; echo swept` }, approval: true }] },
                  { text: "Swept." },
                ],
              },
            ],
          },
        },
      }),
    );
    const server = await serveSharedHost(createHost({ models: new Map([["default", loadScriptedModel(model, "default")]]), defaultModel: "default" }));
    cleanups.push(() => server.close());
    // The first muse hears the child's question and never answers it (stdin stays open), then goes away.
    const asking = startMuse(bundles(), ["run", "clean", "--approve", "ask", "--json", "--ws", server.url], { stdin: "pipe", timeoutMs: 60_000 });
    cleanups.push(() => void asking.child.kill("SIGKILL"));
    expect(await asking.waitFor((out) => out.includes('"type":"approvalAsked"'), 30_000)).toBe(true);
    const sessionId = (JSON.parse(asking.output().split("\n")[0] as string) as { sessionId: string }).sessionId;
    asking.child.kill("SIGKILL");
    await asking.result;
    expect(existsSync(marker)).toBe(false);

    const resumed = await runMuse(bundles(), ["resume", "--session", sessionId, "--approve", "all", "--ws", server.url], { timeoutMs: 60_000 });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
    const out = resumed.stdout;
    expect(out).toMatch(/\n {2}\? subagent cleaner asks: Run shell: touch \S+; echo swept\? yes \(--approve all\)\n/);
    expect(out).toMatch(
      /\n {2}\[cleaner\] {3}\| swept\n {2}\[cleaner\] {3}= completed\n {2}\[cleaner\] Swept\.\n {2}\[cleaner\] turn completed: completed after \d+\.\d s\n/,
    );
    // The parent's own terminal, unindented, after its child's.
    expect(out).toMatch(/\nCleaned\.\nturn completed: completed after \d+\.\d s\n$/);
  }, 120_000);
});
