/** What the bridge tests read of a spawned host: its turns' tool calls, and the processes below it. */
import type { LedgerItem, ToolCallItem } from "../../src/index.js";
import type { SpawnedHost } from "../../src/node/index.js";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";

/** The toolCall items of turn `turnId` in `host`'s ledger, in order. */
export function toolItems(host: Pick<SpawnedHost, "items">, turnId: string): Array<ToolCallItem & LedgerItem> {
  return host.items.itemsOf(turnId).filter((i): i is ToolCallItem & LedgerItem => i.kind === "toolCall");
}

/** The pid of the live process below `root` whose command line is `command`, or 0. */
export function pidBelow(root: number, command: string): number {
  return descendantsOf(root, scanProcesses(true)).find((p) => p.command === command)?.pid ?? 0;
}
