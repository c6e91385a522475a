/**
 * What `muse run` and `muse resume` show of a session, as text (TextView, textView.ts: a terminal
 * or plain lines) or as NDJSON events (JsonView, jsonView.ts). Both receive the same calls in wire order: each
 * notification as the wire carried it (MSP 2.0: an append is an `item/delta`, another change an
 * `item/updated` patch) with, for an item notification, the whole item the client folded from it.
 */
import type { Item, MspNotification, ToolApproveParams, ToolApproveResult, ToolCallItem, TurnCompletedParams } from "@muse-code/sdk";
import { describeEnding, describeUsage } from "@muse-code/sdk/ui";
import type { SteerRefusal } from "./steerRefusal.js";

/**
 * What a view is told of the session: its id, its model when known, and for `muse resume` how
 * many notifications the replay holds, after which cursor, and the items in progress there.
 *
 * @example
 * ```ts
 * const details: SessionDetails = { sessionId, replayed: 2, after: "v:…:21", items: [] };
 * ```
 */
export interface SessionDetails {
  sessionId: string;
  model?: string;
  replayed?: number;
  after?: string;
  items?: Item[];
}

/**
 * The calls a view receives while `muse` follows a session.
 *
 * @example
 * ```ts
 * const view: SessionView = new JsonView((line) => process.stdout.write(`${line}\n`));
 * view.session({ sessionId, model: "default" });
 * ```
 */
export interface SessionView {
  /**
   * The session is known (created or resumed). After a cursor, `items` are the resume answer's
   * items in progress there, whole: the base the replayed `item/delta`s and patches fold onto.
   */
  session(details: SessionDetails): void;
  /**
   * A notification about a shown turn, in wire order, as the wire carried it. For an item
   * notification, `item` is the whole item it leaves as the client folded it (`client.items`, see
   * `notificationItem`); `undefined` when the client could not apply it (a broken delta chain,
   * which the SDK reports as a protocol error), or for other notifications.
   */
  notification(notification: MspNotification, item?: Item): void;
  /** The turn was queued behind another: it starts when that one ends. */
  queued(turnId: string): void;
  /** The first Ctrl-C: `turn/cancel` is being sent. */
  stopping(turnId: string): void;
  /** The stop's answer: `already_terminal` means the turn ended before the stop reached it. */
  stopAnswered(turnId: string, ack: "accepted" | "already_terminal"): void;
  /** A sentence about the run (not an error): a stop that takes long, a second Ctrl-C. */
  note(text: string): void;
  /**
   * A line typed while the turn ran was not taken as steering (`turn/steer` refused or failed):
   * `Not steered: <why>`. A steer that was taken shows on the stream instead, as the turn's
   * `message` item with `author: "user"`.
   */
  steerRefused(text: string, refusal: SteerRefusal): void;
  /** The host asked before running a tool (`tool/approve`), as the SDK delivered it. */
  approvalAsked(request: ToolApproveParams): void;
  /** The question was answered on the wire: by muse (its prompt, `--approve`) or by the SDK (`cancelled`: withdrawn). */
  approvalAnswered(request: ToolApproveParams, answer: ToolApproveResult): void;
  /** A y/N question is shown: `Run shell: ls? [y/N]` (or, answered by `--approve`, without the choices). */
  promptOpened(question: string): void;
  /** The question's line ends: the key read (`y`, `n`, `^C`), `yes (--approve all)`, or why it was withdrawn. */
  promptClosed(answer: string): void;
  /** The run is over with this exit code (and, when it did not end with a turn, why). */
  end(code: number, why?: string): void;
}

/**
 * The command a tool call ran, for its header: `args.command` of a shell call, else the tool and
 * its JSON arguments.
 *
 * @example
 * ```ts
 * toolCommand({ tool: "shell", args: '{"command":"ls"}' } as ToolCallItem); // "ls"
 * ```
 */
export function toolCommand(item: Pick<ToolCallItem, "tool" | "args">): string {
  try {
    const args = JSON.parse(item.args) as unknown;
    if (typeof args === "object" && args !== null && typeof (args as { command?: unknown }).command === "string") return (args as { command: string }).command;
  } catch {
    // not JSON: show it as it is
  }
  return item.args;
}

/**
 * The terminal line: `turn <terminal>: ` and what happened in `describeEnding`'s words (the SDK's
 * one wording: "you stopped it", "stopped by policy: …", "the host shut down", "the host
 * restarted", …, and the host's reason in parentheses unless the sentence is made from it), the
 * duration, then the turn's usage when the host sent it (MSP 2.1) in `describeUsage`'s words:
 * `turn cancelled: you stopped it (cancelled during tool execution) after 1.4 s; tokens 120 in, 8 out, 0 reasoning`.
 *
 * @example
 * ```ts
 * terminalLine({ terminal: "completed", reason: "completed", durationMs: 2100 } as TurnCompletedParams); // "turn completed: completed after 2.1 s"
 * ```
 */
export function terminalLine(t: TurnCompletedParams): string {
  const ending = describeEnding({ terminal: t.terminal, reason: t.reason, ...(t.cause === undefined ? {} : { cause: t.cause }) });
  // "failed: …" under "turn failed: " would say failed twice.
  const what = ending.startsWith(`${t.terminal}: `) ? ending.slice(t.terminal.length + 2) : ending;
  const after = typeof t.durationMs === "number" ? ` after ${(t.durationMs / 1000).toFixed(1)} s` : "";
  const usage = t.usage === undefined ? "" : `; ${describeUsage(t.usage)}`;
  return `turn ${t.terminal}: ${what}${after}${usage}`;
}
