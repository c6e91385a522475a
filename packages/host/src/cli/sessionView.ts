/**
 * What `muse run` and `muse resume` show of a session, as text (TextView: a terminal or plain
 * lines) or as NDJSON events (JsonView). Both receive the same calls in wire order: each
 * notification as the wire carried it (MSP 2.0: an append is an `item/delta`, another change an
 * `item/updated` patch) with, for an item notification, the whole item the client folded from it.
 */
import {
  ApprovalStates,
  RejectionReasons,
  type Item,
  type MspNotification,
  type ToolApproveParams,
  type ToolApproveResult,
  type ToolCallItem,
  type TurnCompletedParams,
} from "@muse-code/sdk";
import { describeEnding, describeTreeProgress, describeUsage } from "@muse-code/sdk/ui";
import type { Screen } from "./screen.js";
import { ShownTree } from "./shownTree.js";
import type { SteerRefusal } from "./steerRefusal.js";
import type { Styles } from "./style.js";

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

/** The Screen owner of the y/N prompt's line. */
const PROMPT = "approval prompt";

/** The progress line's label from the first Ctrl-C until the terminal. */
const STOPPING = "stopping (Ctrl-C again closes the connection)";

/** What the progress line adds while a stop waits: the second Ctrl-C's meaning. */
const AGAIN = "(Ctrl-C again closes the connection)";

/** The indent of one subagent level. */
const LEVEL = "  ";

/** What a text view remembers of one item: how much of its text or output it has printed. */
interface Shown {
  /** The text shown so far (message, reasoning): each append is added to it, never re-rendered. */
  text: string;
  /** How much of the output has been taken (tool call). @unit UTF-16 code units */
  printed: number;
  headed: boolean;
  /** Output printed up to the last newline; the partial rest waits for its newline or the end. */
  pending: string;
  /** Tool call: its question was asked (`approval: "pending"` seen). */
  asked?: boolean;
  /** Tool call: the grant that approved it without a question was printed. */
  grantShown?: boolean;
}

/**
 * The text view: message text inline as it streams (each `item/delta` writes its `append`, the
 * text is never rendered again), reasoning dimmed after `(thinking)`, each tool call's command, its
 * output lines as they come and its final status, then the turn's terminal line. With a progress
 * line (a terminal), a spinner says what is awaited. An item first seen mid-stream (a resume
 * after a cursor) is shown whole, then appended to.
 *
 * Subagents: given the {@link ShownTree} its command feeds, every line of a child
 * turn is indented two spaces a level and starts with the child's name in brackets
 * (`  [worker-a] …`): the child's start (`started: <prompt>`), its items, and its own terminal
 * line in `describeEnding`'s words ("stopped because its parent turn stopped"). A delegating
 * call shows its header and its status; its output (the child's last message) is not printed
 * again. While a stop waits, the progress line says `stopping 2 of 3 subagents…`.
 *
 * @example
 * ```ts
 * const view = new TextView(new Screen(process.stdout, { progress: true }), styles(true), { showTurnIds: false });
 * client.events.on("notification", (n) => view.notification(n, notificationItem(client.items, n)));
 * ```
 */
export class TextView implements SessionView {
  readonly #screen: Screen;
  readonly #s: Styles;
  readonly #showTurnIds: boolean;
  readonly #items = new Map<string, Shown>();
  /** The tool calls running, each with its turn: a turn's calls are labelled when it runs more than one. */
  readonly #openTools = new Map<string, string>();
  #stopping = false;
  /** The turns a stop was sent for: their descendants' progress is the progress line's. */
  readonly #stopped = new Set<string>();
  /** The child turns whose start was shown (their items are shown nested). */
  readonly #children = new Set<string>();
  /** The subagent trees, fed by the command (never observed here). */
  readonly #tree: ShownTree;
  /** The question on the open prompt line, to repeat if other output cut the line. */
  #question: string | undefined;

  constructor(screen: Screen, s: Styles, options: { showTurnIds: boolean; tree?: ShownTree }) {
    this.#screen = screen;
    this.#s = s;
    this.#showTurnIds = options.showTurnIds;
    this.#tree = options.tree ?? new ShownTree();
  }

  session(details: SessionDetails): void {
    const model = details.model === undefined ? "" : ` (model ${details.model})`;
    this.#screen.line(this.#s.dim(`session ${details.sessionId}${model}`));
    if (details.replayed !== undefined) {
      const after = details.after === undefined ? "" : ` after ${details.after}`;
      this.#screen.line(this.#s.dim(`replaying ${details.replayed} notification${details.replayed === 1 ? "" : "s"}${after}`));
    }
    this.#screen.status("waiting for the host");
  }

  notification({ method, params }: MspNotification, item?: Item): void {
    if (params === undefined) return;
    if (method === "turn/started") {
      const turnId = String(params["turnId"]);
      const child = this.#tree.subagent(turnId);
      if (child !== undefined) this.#children.add(turnId);
      if (child !== undefined) this.#screen.line(this.#prefix(turnId) + this.#s.dim(child.prompt === undefined ? "started" : `started: ${child.prompt}`));
      else if (this.#showTurnIds) this.#screen.line(this.#s.dim(`turn ${turnId} started`));
      this.#screen.status(this.#stopping ? this.#stoppingLabel() : "waiting for the model");
    } else if (method === "item/started" || method === "item/completed") {
      this.#item(item ?? (params["item"] as Item), method === "item/completed");
    } else if (method === "item/updated" || method === "item/delta") {
      // A patch or an append: shown from the whole item it leaves; nothing when the client could not apply it.
      if (item === undefined) return;
      const shown = this.#items.get(item.itemId);
      if (method === "item/delta" && item.kind !== "toolCall" && shown !== undefined) this.#append(item, String(params["append"]), shown);
      else this.#item(item, false);
    } else if (method === "turn/completed") {
      const t = params as unknown as TurnCompletedParams;
      const colour = t.terminal === "completed" ? this.#s.green : t.terminal === "cancelled" ? this.#s.yellow : this.#s.red;
      if (this.#tree.subagent(t.turnId) !== undefined) {
        // A child's own ending, under its name; the top-level turn goes on.
        this.#screen.line(this.#prefix(t.turnId) + colour(terminalLine(t)));
        this.#screen.status(this.#stopping ? this.#stoppingLabel() : "waiting for the model");
        return;
      }
      this.#screen.status(undefined);
      this.#screen.line(colour(terminalLine(t)));
      this.#stopping = false;
      this.#stopped.clear();
    }
  }

  queued(turnId: string): void {
    this.#screen.line(this.#s.dim(`turn ${turnId} queued: it starts when the running turn ends`));
  }

  stopping(turnId: string): void {
    this.#stopping = true;
    this.#stopped.add(turnId);
    const progress = this.#tree.progressOf(turnId);
    const subagents = progress.running > 0 ? ` (${describeTreeProgress(progress)})` : "";
    this.#screen.line(this.#s.yellow(`stopping…${subagents}`));
    this.#screen.status(this.#stoppingLabel());
  }

  /** The progress line while a stop waits: how many subagents of the stopped turns are still running, if any. */
  #stoppingLabel(): string {
    let started = 0;
    let ended = 0;
    for (const turnId of this.#stopped) {
      const progress = this.#tree.progressOf(turnId);
      started += progress.started;
      ended += progress.ended;
    }
    if (started === 0) return STOPPING;
    return `${describeTreeProgress({ started, ended, running: started - ended }, { stopping: true })} ${AGAIN}`;
  }

  /** The start of a line of `turnId`: nothing for a top-level turn; for a subagent's, its indent and `[name] `. */
  #prefix(turnId: string): string {
    const child = this.#tree.subagent(turnId);
    return child === undefined ? "" : `${LEVEL.repeat(child.depth)}${this.#s.cyan(`[${child.name}]`)} `;
  }

  /**
   * Write `text` for item `owner` of turn `turnId`: each line it starts begins with the turn's
   * prefix (a subagent's indent and name), so a line another item cut is resumed under its name.
   */
  #put(turnId: string, text: string, owner: string, style: (text: string) => string = (t) => t): void {
    const prefix = this.#prefix(turnId);
    if (prefix === "") {
      this.#screen.write(style(text), owner);
      return;
    }
    let fresh = this.#screen.atLineStart || this.#screen.lineOwner !== owner;
    let out = "";
    const parts = text.split("\n");
    parts.forEach((part, i) => {
      if (part !== "") {
        if (fresh) out += prefix;
        out += style(part);
        fresh = false;
      }
      if (i < parts.length - 1) {
        out += "\n";
        fresh = true;
      }
    });
    this.#screen.write(out, owner);
  }

  stopAnswered(_turnId: string, ack: "accepted" | "already_terminal"): void {
    if (ack === RejectionReasons.alreadyTerminal) this.#screen.line(this.#s.dim("the turn had already ended when the stop reached the host"));
  }

  note(text: string): void {
    this.#screen.line(this.#s.yellow(text));
  }

  approvalAsked(_request: ToolApproveParams): void {}

  approvalAnswered(_request: ToolApproveParams, _answer: ToolApproveResult): void {}

  promptOpened(question: string): void {
    this.#question = question;
    this.#screen.write(`${this.#s.yellow("  ? ")}${this.#s.bold(question)} `, PROMPT);
  }

  promptClosed(answer: string): void {
    const question = this.#question ?? "";
    this.#question = undefined;
    // Other output cut the prompt's line: say again what is answered.
    if (this.#screen.atLineStart) this.#screen.write(`${this.#s.yellow("  ? ")}${question.replace(/ \[y\/N\]$/, "")} `, PROMPT);
    this.#screen.write(`${answer}\n`, PROMPT);
  }

  end(_code: number, _why?: string): void {
    this.#screen.close();
  }

  steerRefused(text: string, refusal: SteerRefusal): void {
    this.#screen.line(this.#s.yellow(`Not steered: ${refusal.why}`) + this.#s.dim(` (${JSON.stringify(text)})`));
  }

  #item(item: Item, completed: boolean): void {
    let shown = this.#items.get(item.itemId);
    if (shown === undefined) {
      shown = { text: "", printed: 0, headed: false, pending: "" };
      this.#items.set(item.itemId, shown);
    }
    if (item.kind === "message" && item.author === "user") this.#steering(item, shown, completed);
    else if (item.kind === "toolCall") this.#tool(item, shown, completed);
    else this.#text(item, item.kind === "reasoning", item.text, shown, completed, item.kind === "message" && item.interrupted === true);
    if (completed) this.#items.delete(item.itemId);
  }

  /**
   * A steering message (MSP 2.1, `author: "user"`): the user's words once, `» you (steering): …`,
   * then what became of them in the demo's words: heard, discarded, carried into the next turn,
   * or lost.
   */
  #steering(item: Item & { kind: "message" }, shown: Shown, completed: boolean): void {
    if (!shown.headed) {
      shown.headed = true;
      this.#screen.line(`${this.#prefix(item.turnId)}${this.#s.cyan(this.#s.enabled ? "»" : ">>")} ${this.#s.bold("you (steering):")} ${item.text}`);
    }
    if (!completed) return;
    const fate =
      item.status === "completed"
        ? "steering: heard"
        : item.carriedOver === true
          ? "steering: carried into the next turn"
          : item.status === "failed"
            ? "steering: lost (the host restarted)"
            : "steering: discarded";
    const why = item.status === "cancelled" && item.failureReason !== undefined && item.carriedOver !== true ? ` (${item.failureReason})` : "";
    this.#screen.line(this.#prefix(item.turnId) + this.#s.dim(`   ${fate}${why}`));
  }

  /** An `item/delta` of a message or reasoning already shown: its `append` is written as it is. */
  #append(item: Item, append: string, shown: Shown): void {
    const reasoning = item.kind === "reasoning";
    this.#write(item, reasoning, append, shown);
    shown.text += append;
    this.#screen.status(this.#stopping ? this.#stoppingLabel() : reasoning ? "thinking" : "writing");
  }

  /** Writes `piece` of an item's text, after the item's heading the first time. */
  #write(item: Item, reasoning: boolean, piece: string, shown: Shown): void {
    if (piece === "") return;
    const id = item.itemId;
    if (!shown.headed) {
      shown.headed = true;
      // A new item starts on a line of its own: end the unfinished one (once, whoever wrote it).
      this.#screen.endLine(this.#screen.lineOwner);
      if (reasoning) this.#put(item.turnId, "(thinking) ", id, this.#s.dim);
    }
    this.#put(item.turnId, piece, id, reasoning ? this.#s.dim : undefined);
  }

  #text(item: Item, reasoning: boolean, text: string, shown: Shown, completed: boolean, interrupted: boolean): void {
    const id = item.itemId;
    // The whole text (an item started, completed, or first seen mid-stream): what extends the
    // text shown is written; a rewrite (not an extension of what was shown) is shown whole.
    const extended = text.startsWith(shown.text);
    this.#write(item, reasoning, extended ? text.slice(shown.text.length) : `\n${text}`, shown);
    shown.text = text;
    if (!completed) {
      this.#screen.status(this.#stopping ? this.#stoppingLabel() : reasoning ? "thinking" : "writing");
      return;
    }
    if (interrupted) this.#put(item.turnId, " (interrupted)", id, this.#s.dim);
    this.#screen.endLine(id);
    this.#screen.status(this.#stopping ? this.#stoppingLabel() : "waiting for the model");
  }

  #tool(item: ToolCallItem, shown: Shown, completed: boolean): void {
    const prefix = this.#s.enabled ? "  │ " : "  | ";
    const lead = this.#prefix(item.turnId);
    if (!shown.headed) {
      shown.headed = true;
      this.#openTools.set(item.itemId, item.turnId);
      this.#screen.line(`${lead}${this.#s.cyan(this.#s.enabled ? "●" : ">")} ${this.#s.bold(item.tool)}: ${this.#headerCommand(item)}`);
    }
    if (item.approval === ApprovalStates.pending) shown.asked = true;
    if (item.grant !== undefined && shown.asked !== true && shown.grantShown !== true) {
      // Approved with no question: say which session grant covered it.
      shown.grantShown = true;
      const rule = `${item.grant.match} ${item.grant.tool} ${item.grant.args ?? "(any arguments)"}`;
      this.#screen.line(lead + this.#s.dim(`${prefix}not asked: approved by session grant ${item.grant.grantId} (${rule})`));
    }
    // A delegating call's output is its child's last message: shown already, nested, when the child's stream was.
    const output = item.subagent !== undefined && this.#children.has(item.subagent.turnId) ? "" : item.visibleOutput;
    let fresh = output.length >= shown.printed ? output.slice(shown.printed) : output;
    shown.printed = output.length;
    fresh = shown.pending + fresh;
    const cut = completed ? fresh.length : fresh.lastIndexOf("\n") + 1;
    const ready = fresh.slice(0, cut);
    shown.pending = fresh.slice(cut);
    const siblings = [...this.#openTools.values()].filter((turnId) => turnId === item.turnId).length;
    const label = siblings > 1 ? `${item.tool}#${item.callId.slice(-4)} ` : "";
    if (ready !== "") {
      for (const line of ready.replace(/\n$/, "").split("\n")) this.#screen.line(`${lead}${this.#s.dim(prefix)}${label}${line}`);
    }
    if (!completed) {
      this.#screen.status(
        this.#stopping ? this.#stoppingLabel() : item.approval === ApprovalStates.pending ? `asking to run ${item.tool}` : `running ${item.tool}`,
      );
      return;
    }
    this.#openTools.delete(item.itemId);
    if (item.subagent !== undefined) this.#children.delete(item.subagent.turnId);
    if (item.truncated) this.#screen.line(lead + this.#s.dim(`${prefix}… (output truncated)`));
    const end = this.#s.enabled ? "  └ " : "  = ";
    const status =
      item.status === "completed" ? this.#s.green("completed") : item.status === "cancelled" ? this.#s.yellow("cancelled") : this.#s.red(item.status);
    const message = item.approval === ApprovalStates.denied ? item.error?.["message"] : undefined;
    const why = (item.failureReason === undefined ? "" : `: ${item.failureReason}`) + (typeof message === "string" && message !== "" ? ` (${message})` : "");
    this.#screen.line(`${lead}${this.#s.dim(end)}${status}${why}`);
    this.#screen.status(this.#stopping ? this.#stoppingLabel() : "waiting for the model");
  }

  #headerCommand(item: ToolCallItem): string {
    const command = toolCommand(item).replace(/\s*\n\s*/g, " ");
    if (!this.#s.enabled) return command;
    const child = this.#tree.subagent(item.turnId);
    const lead = child === undefined ? 0 : LEVEL.length * child.depth + child.name.length + 3; // "  [name] "
    const width = (this.#screen.columns ?? 100) - item.tool.length - 5 - lead;
    return command.length > width && width > 10 ? `${command.slice(0, width - 1)}…` : command;
  }
}

/**
 * The NDJSON view (`--json`): one JSON object a line, `type` first: `session` (`sessionId`,
 * `model?`, `replayed?`, `after?`, `items?`), `notification` (`method`, `params`, `emittedAtMs?`:
 * the wire's, so an `item/delta` is its `append`; fold with `foldItem`), `queued`, `stopping`, `stopAnswered` (`ack`), `note`
 * (`text`), `steerRefused` (`text`, `reason?`, `why`: a typed line the host did not take as steering), `approvalAsked` (the `tool/approve` params), `approvalAnswered` (`sessionId`,
 * `turnId`, `itemId`, `callId`, `decision`, `reason?`), and last `exit` (`code`, `why?`).
 *
 * @example
 * ```ts
 * const view = new JsonView((line) => process.stdout.write(`${line}\n`));
 * view.end(0); // {"type":"exit","code":0}
 * ```
 */
export class JsonView implements SessionView {
  readonly #emit: (line: string) => void;

  constructor(emit: (line: string) => void) {
    this.#emit = emit;
  }

  session(details: SessionDetails): void {
    this.#out({ type: "session", ...details });
  }

  notification(notification: MspNotification): void {
    this.#out({ type: "notification", ...notification });
  }

  queued(turnId: string): void {
    this.#out({ type: "queued", turnId });
  }

  stopping(turnId: string): void {
    this.#out({ type: "stopping", turnId });
  }

  stopAnswered(turnId: string, ack: "accepted" | "already_terminal"): void {
    this.#out({ type: "stopAnswered", turnId, ack });
  }

  note(text: string): void {
    this.#out({ type: "note", text });
  }

  steerRefused(text: string, refusal: SteerRefusal): void {
    this.#out({ type: "steerRefused", text, ...refusal });
  }

  approvalAsked(request: ToolApproveParams): void {
    this.#out({ type: "approvalAsked", ...request });
  }

  approvalAnswered(request: ToolApproveParams, answer: ToolApproveResult): void {
    const { sessionId, turnId, itemId, callId } = request;
    this.#out({ type: "approvalAnswered", sessionId, turnId, itemId, callId, ...answer });
  }

  promptOpened(_question: string): void {}

  promptClosed(_answer: string): void {}

  end(code: number, why?: string): void {
    this.#out(why === undefined ? { type: "exit", code } : { type: "exit", code, why });
  }

  #out(event: Record<string, unknown>): void {
    this.#emit(JSON.stringify(event));
  }
}
