/**
 * Test helper for approvals against the real host: a scripted model whose tool call asks first
 * and whose only side effect is a marker file, so a test can tell whether the tool ran.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Write, in `dir`, a model whose one turn asks to run `echo ran > <marker>; echo wrote it` (then
 * the `after` tool calls, in the same step), then says "Finished." in a second step. Returns the
 * model's file and the marker's path (absent until the tool runs).
 */
export function approvalModel(dir: string, after: Array<Record<string, unknown>> = []): { model: string; marker: string } {
  const marker = join(dir, "marker");
  const model = join(dir, "approval.json");
  const script = {
    turns: [
      {
        steps: [
          {
            text: "I will write the marker.",
            toolCalls: [{ tool: "shell", args: { command: `echo ran > '${marker}'; echo wrote it` }, approval: true }, ...after],
          },
          { text: "Finished." },
        ],
      },
    ],
  };
  writeFileSync(model, JSON.stringify(script));
  return { model, marker };
}
