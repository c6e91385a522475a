/**
 * Asking before a tool runs: a scripted model whose tool call says `"approval": true`, and one
 * handler that answers the host's `tool/approve` questions. The first turn's call is denied (it
 * never runs, and the turn goes on), the second turn's is approved (it runs after the answer).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolCallItem } from "@muse-code/sdk";
import { spawnReferenceHost } from "@muse-code/sdk/node";

// #region script
// The reference host's scripted model: this call is asked about before it runs.
const script = {
  turns: [
    {
      steps: [
        { text: "Publishing the package.", toolCalls: [{ tool: "shell", args: { command: "echo 'published @acme/widgets 1.4.0'" }, approval: true }] },
        { text: "Done." },
      ],
    },
  ],
};
// #endregion script
const dir = mkdtempSync(join(tmpdir(), "my-app-approvals-"));
writeFileSync(join(dir, "publish.json"), JSON.stringify(script));

try {
  await using msp = spawnReferenceHost({ script: join(dir, "publish.json") });
  const { sessionId } = await msp.command("session/create", {});

  // #region handler
  let releaseReviewed = false;
  msp.onApproval((request) => {
    console.log(`asked: may I run ${request.tool} ${request.args}?`);
    if (releaseReviewed) return { decision: "approve" };
    return { decision: "deny", reason: "not before the release review" };
  });
  // #endregion handler

  // #region state
  // The item carries the question's state: render a badge from `approval` when it changes.
  const badges = new Map<string, string>();
  msp.events.on("item/updated", ({ item }) => {
    if (item.kind !== "toolCall" || item.approval === undefined || badges.get(item.itemId) === item.approval) return;
    badges.set(item.itemId, item.approval);
    console.log(`  the call is ${item.approval}`);
  });
  // #endregion state

  const callOf = (turnId: string) => msp.items.itemsOf(turnId).find((item): item is ToolCallItem => item.kind === "toolCall");

  // #region deny
  const first = await msp.startTurn({ sessionId, input: [{ type: "text", text: "Publish the package" }] }).completed;
  const denied = callOf(first.turnId);
  console.log(`turn ${first.terminal}; the call ${denied?.status}: ${denied?.failureReason} (${String(denied?.error?.["message"])})`);
  // #endregion deny

  releaseReviewed = true;
  const second = await msp.startTurn({ sessionId, input: [{ type: "text", text: "Publish it now" }] }).completed;
  const ran = callOf(second.turnId);
  console.log(`turn ${second.terminal}; the call ${ran?.status}: ${JSON.stringify(ran?.visibleOutput)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
