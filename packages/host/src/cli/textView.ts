/** TextView: what `muse run` and `muse resume` show of a session as text, on a terminal or as plain lines. */
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
import { describeTreeProgress } from "@muse-code/sdk/ui";
import type { Screen } from "./screen.js";
import { ShownTree } from "./shownTree.js";
import type { SteerRefusal } from "./steerRefusal.js";
import type { Styles } from "./style.js";
import { terminalLine, toolCommand, type SessionDetails, type SessionView } from "./sessionView.js";

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
