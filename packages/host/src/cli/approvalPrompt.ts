/**
 * ApprovalPrompt: how `muse` answers a host's `tool/approve` questions, through the SDK's
 * `client.onApproval`. `--approve ask` asks `Run <tool>: <command>? [y/N]` and reads one key (a
 * line off a terminal); when the host offers more (MSP 2.1), the prompt lists each offered key (y
 * once, a always for this session, with the grant's rule shown exactly, n deny, s deny and stop); `all` approves and `none` denies, each printed as a line. A question the
 * SDK answers first (the turn was stopped or ended, the host withdrew it, the connection closed)
 * aborts the handler's signal: the prompt is withdrawn and says why. Ctrl-C at the prompt is Stop.
 * A question from a subagent's turn is asked the same way, and says which subagent asks:
 * `subagent worker-a asks: Run shell: ls?`.
 */
import { ApprovalDecisions, type ApprovalHandler, type MspClient, type ToolApproveParams, type ToolApproveResult } from "@muse-code/sdk";
import { offeredDecisions } from "@muse-code/sdk/ui";
import type { PromptInput } from "./promptInput.js";
import type { SessionView } from "./sessionView.js";
import { toolCommand } from "./sessionView.js";
import type { ShownTree } from "./shownTree.js";

/** `--approve`: ask (a y/N prompt), all (approve every call) or none (deny every call). */
export type ApprovePolicy = "ask" | "all" | "none";

/** The reason `--approve none` (the default off a terminal) gives the host: it says what to pass. */
export const DENIED_BY_POLICY = "muse --approve none: pass --approve ask (on a terminal) or --approve all to let tools run";

/** Options of {@link ApprovalPrompt}. */
export interface ApprovalPromptOptions {
  policy: ApprovePolicy;
  view: SessionView;
  /** The subagent trees of the shown turns: a question from a subagent's turn says which one asks. */
  tree?: ShownTree;
  /** Where `ask` reads answers; without one, `ask` denies (nothing to read from). */
  input?: PromptInput;
  /** Also show the question here (stderr), when the view's output is not the terminal the user reads. */
  echo?: (text: string) => void;
  /** Ctrl-C at the prompt: press Stop, as a SIGINT would. */
  interrupt: () => void;
}

/** The handler's answer once the SDK answered for it: ignored by the SDK, but typed. */
const ALREADY_ANSWERED: ToolApproveResult = { decision: ApprovalDecisions.cancelled };

/**
 * Answers a connection's approval questions by `--approve`'s policy, one at a time, in the order
 * they came; see the module comment.
 */
export class ApprovalPrompt {
  readonly #options: ApprovalPromptOptions;
  /** The SDK's answer to each question, for the withdrawal note. */
  readonly #answers = new WeakMap<ToolApproveParams, ToolApproveResult>();
  /** The questions before this one: one prompt at a time. */
  #queue: Promise<void> = Promise.resolve();
  #stopping = false;

  constructor(options: ApprovalPromptOptions) {
    this.#options = options;
  }

  /**
   * Install the handler on `client` (`onApproval`) and show its approval events on the view.
   * Returns the function that detaches the events.
   */
  attach(client: MspClient): () => void {
    const { view } = this.#options;
    const asked = (question: { request: ToolApproveParams }) => view.approvalAsked(question.request);
    const answered = (question: { request: ToolApproveParams }, answer: ToolApproveResult) => {
      this.#answers.set(question.request, answer);
      view.approvalAnswered(question.request, answer);
    };
    client.events.on("approvalAsked", asked);
    client.events.on("approvalAnswered", answered);
    client.onApproval(this.handler);
    return () => {
      client.events.off("approvalAsked", asked);
      client.events.off("approvalAnswered", answered);
    };
  }

  /** Stop was pressed: a question that comes now is not asked (answered `cancelled`). */
  stopping(): void {
    this.#stopping = true;
  }

  /**
   * Hold the questions (neither shown nor answered) until the returned function is called:
   * `muse resume` shows the session's replay before the question the host asks again.
   */
  hold(): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.#queue = this.#queue.then(() => held);
    return release;
  }

  /** The `onApproval` handler: questions are answered one at a time, in the order they came. */
  readonly handler: ApprovalHandler = (request, { signal }) => {
    const turn = this.#queue.then(() => this.#answer(request, signal));
    this.#queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  };

  #answer(request: ToolApproveParams, signal: AbortSignal): ToolApproveResult | Promise<ToolApproveResult> {
    const { policy, view } = this.#options;
    if (signal.aborted) return ALREADY_ANSWERED; // answered while it waited its turn: never shown
    const asker = this.#options.tree?.subagent(request.turnId);
    const question = `${asker === undefined ? "" : `subagent ${asker.name} asks: `}Run ${request.tool}: ${toolCommand(request)}?`;
    if (policy === "all") {
      view.promptOpened(question);
      view.promptClosed("yes (--approve all)");
      return { decision: ApprovalDecisions.approve, reason: "muse --approve all" };
    }
    if (policy === "none") {
      view.promptOpened(question);
      view.promptClosed("no (--approve none)");
      return { decision: ApprovalDecisions.deny, reason: DENIED_BY_POLICY };
    }
    return this.#ask(request, question, signal);
  }

  async #ask(request: ToolApproveParams, plain: string, signal: AbortSignal): Promise<ToolApproveResult> {
    const { view, input, echo } = this.#options;
    if (this.#stopping) return { decision: ApprovalDecisions.cancelled, reason: "muse is stopping the turn" };
    const offered = offeredDecisions(request);
    const question = `${plain}${offerLegend(request)}`;
    // Raw mode first, then the question: a key typed the moment it shows is read as a key, not
    // echoed, and what was half-typed before it is not an answer (PromptInput.read's `shown`).
    const open = () => {
      view.promptOpened(`${question} [y/N]`);
      echo?.(`${question} [y/N] `);
    };
    const reading = input?.read(signal, open);
    if (reading === undefined) open();
    const close = (text: string) => {
      view.promptClosed(text);
      echo?.(`${text}\n`);
    };
    if (reading === undefined) {
      close("no (nothing to read an answer from)");
      return { decision: ApprovalDecisions.deny, reason: "muse --approve ask: no stdin to read an answer from" };
    }
    const read = await reading;
    // A key for a decision the question did not offer reads as n (the host would refuse it).
    const key = (read === "always" && !offered.includes("approveForSession")) || (read === "stop" && !offered.includes("denyAndStop")) ? "no" : read;
    if (key === "always") {
      close("a (approved for this session)");
      return { decision: ApprovalDecisions.approveForSession };
    }
    if (key === "stop") {
      close("s (denied; stopping the turn)");
      return { decision: ApprovalDecisions.denyAndStop, reason: "answered s at the muse prompt" };
    }
    if (key === "yes") {
      close("y");
      return { decision: ApprovalDecisions.approve };
    }
    if (key === "no") {
      close("n");
      return { decision: ApprovalDecisions.deny, reason: "answered n at the muse prompt" };
    }
    if (key === "ended") {
      close("no (stdin ended)");
      return { decision: ApprovalDecisions.deny, reason: "muse --approve ask: stdin ended before an answer" };
    }
    if (key === "withdrawn") {
      close(withdrawal(this.#answers.get(request)));
      return ALREADY_ANSWERED;
    }
    // Ctrl-C: Stop. The SDK answers `cancelled` as it sends turn/cancel; this handler's answer is moot.
    close("^C");
    this.#stopping = true;
    this.#options.interrupt();
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
    return ALREADY_ANSWERED;
  }
}

/**
 * The keys a question offers beyond y/N (MSP 2.1), each with what it does; the grant an `a`
 * would create is shown exactly: "this exact call" for an exact rule on the call's own tool and
 * arguments, else its match, tool and arguments. Empty for a 2.0 question.
 */
function offerLegend(request: ToolApproveParams): string {
  const offered = offeredDecisions(request);
  const keys: string[] = [];
  if (offered.includes("approve")) keys.push("y = once");
  if (offered.includes("approveForSession")) {
    // The rule exactly: "this exact call" when it is the call's own tool and arguments, matched exactly; else as the host states it, or that it states none.
    const rule = request.grant;
    const exact = rule !== undefined && rule.match === "exact" && rule.tool === request.tool && rule.args === request.args;
    keys.push(
      rule === undefined
        ? "a = always in this session, by a rule the host does not state"
        : exact
          ? "a = always this exact call in this session"
          : `a = always in this session: ${rule.match} ${rule.tool} ${rule.args ?? "(any arguments)"}`,
    );
  }
  if (offered.includes("deny")) keys.push("n = deny");
  if (offered.includes("denyAndStop")) keys.push("s = deny and stop the turn");
  return offered.includes("approveForSession") || offered.includes("denyAndStop") ? ` (${keys.join(", ")})` : "";
}

/** What a withdrawn prompt says: why the SDK answered it. */
function withdrawal(answer: ToolApproveResult | undefined): string {
  const why = answer?.reason;
  if (why === undefined) return "withdrawn";
  return why.startsWith("withdrawn") ? why : `withdrawn: ${why}`;
}
