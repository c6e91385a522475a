/**
 * A Stop button and an approval dialog on one turn. StopController's snapshot carries the open
 * question (`approval`), so the same render shows the dialog; a Stop with the dialog open answers
 * the question `cancelled` itself, then cancels the turn, and the tool never runs.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StopController, type StopSnapshot } from "@muse-code/sdk/ui";
import { spawnReferenceHost } from "@muse-code/sdk/node";

const script = {
  turns: [{ steps: [{ text: "Publishing the package.", toolCalls: [{ tool: "shell", args: { command: "echo published" }, approval: true }] }] }],
};
const dir = mkdtempSync(join(tmpdir(), "my-app-approvals-"));
writeFileSync(join(dir, "publish.json"), JSON.stringify(script));

try {
  await using msp = spawnReferenceHost({ script: join(dir, "publish.json") });
  const { sessionId } = await msp.command("session/create", {});

  // #region wire
  // The dialog answers (through the controller), so the handler leaves every question open.
  msp.onApproval(() => new Promise(() => {}));
  const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Publish the package" }] });
  const stop = new StopController(turn, { stopTimeoutMs: 10_000 });

  // Your render: the dialog while `approval` is set, the Stop button while `canStop`.
  let showDialog = () => {};
  const dialogShown = new Promise<void>((resolve) => (showDialog = resolve));
  function render({ state, canStop, approval, turnCompleted }: StopSnapshot): void {
    const dialog = approval === undefined ? "" : ` [Allow ${approval.request.tool} ${approval.request.args}? Approve | Deny]`;
    console.log(`[${canStop ? "Stop" : "    "}] ${state}${dialog}${turnCompleted === undefined ? "" : `: ${turnCompleted.terminal}`}`);
    if (approval !== undefined) showDialog();
  }
  stop.subscribe(render);
  // The dialog's buttons would call stop.answer("approve") or stop.answer("deny", "…").
  // #endregion wire

  await dialogShown; // the user is looking at the question

  // #region click
  const final = await stop.stop(); // the user clicks Stop with the dialog open
  // #endregion click
  console.log(`ended ${final.turnCompleted?.terminal}: ${final.turnCompleted?.reason}`);
  const call = msp.items.itemsOf(final.turnCompleted?.turnId ?? "").find((item) => item.kind === "toolCall");
  console.log(`the call: ${call?.status}, approval ${call?.kind === "toolCall" ? call.approval : "?"}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
