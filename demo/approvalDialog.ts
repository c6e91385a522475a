/**
 * The Approve/Deny dialog: the host's open `tool/approve` question of the running turn (a
 * {@link SessionApproval} from the turn's `approvals`), with the tool and the exact command (or
 * arguments) it asks to run. A non-modal `<dialog>`, so the Stop button stays usable while it is
 * open: Stop answers the question `cancelled` (the SDK does it) and the dialog closes. It is
 * labelled by its heading and described by the command; opening it moves focus to Deny (the
 * choice that runs nothing), closing it gives focus back to where it was. Tab moves between the
 * buttons, Enter or Space presses one, Escape denies. A question stays on show, once, across a
 * drop: while the connection is down it says so, and an answer given then is kept by the
 * session and sent when the host asks again after the reconnect. The page decides which
 * question it shows; this only renders it and hands the answer to the page.
 *
 * A host of MSP 2.1 offers its decisions: the dialog shows a button for each one offered
 * (Approve, Deny, "Always allow in this session", "Deny and stop") and hides the others; beside
 * "Always allow" it states the grant's rule exactly (this exact command, or the wider rule the
 * host states), before the user can pick it.
 *
 * A subagent's question (issue 23) says which subagent asks: "The subagent “docs” (asked to
 * “check the docs”) asks to run shell for the turn “…”", the turn being the top-level turn the
 * user started; its answer goes back to that subagent's question.
 */
import type { ApprovalDecision, ApprovalOffer } from "@muse-code/sdk";
import type { SessionApproval } from "@muse-code/sdk/session";

/** The dialog's elements, from index.html. */
export interface ApprovalDialogElements {
  dialog: HTMLDialogElement;
  /** The tool's name. */
  tool: HTMLElement;
  /** The command (a shell call's `command`) or the arguments as sent. */
  command: HTMLElement;
  /** The prompt of the turn that asks (a subagent's: the top-level turn above it). */
  turn: HTMLElement;
  /** Who asks: "agent", or the subagent by name. */
  asker?: HTMLElement;
  approve: HTMLButtonElement;
  deny: HTMLButtonElement;
  /** Shown while the question is not open on a live connection (the session waits for the host to ask again). */
  offline: HTMLElement;
  /** "Always allow in this session" (`approveForSession`), shown when the host offers it. */
  always?: HTMLButtonElement;
  /** "Deny and stop" (`denyAndStop`), shown when the host offers it. */
  stop?: HTMLButtonElement;
  /** The rule "Always allow" would create, shown with it. */
  grant?: HTMLElement;
}

/** Answers the question (the page calls `session.answerApproval`). */
export type AnswerListener = (question: SessionApproval, decision: ApprovalDecision, reason?: string) => void;

/** The reason sent with a Deny (the host keeps it as the denied call's `error.message`). */
export const DENY_REASON = "denied in the Stop-button app";

/** Renders one open question at a time and hands the user's answer to the page. */
export class ApprovalDialog {
  readonly #elements: ApprovalDialogElements;
  readonly #onAnswer: AnswerListener;
  #question: SessionApproval | undefined;
  /** Where focus was before the dialog opened; it goes back there when the dialog closes. */
  #returnFocus: HTMLElement | undefined;

  constructor(elements: ApprovalDialogElements, onAnswer: AnswerListener) {
    this.#elements = elements;
    this.#onAnswer = onAnswer;
    elements.approve.addEventListener("click", () => this.#answer("approve"));
    elements.deny.addEventListener("click", () => this.#answer("deny"));
    elements.always?.addEventListener("click", () => this.#answer("approveForSession"));
    elements.stop?.addEventListener("click", () => this.#answer("denyAndStop"));
    elements.dialog.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      this.#answer("deny");
    });
  }

  /** The question on show, if any. */
  get question(): SessionApproval | undefined {
    return this.#question;
  }

  /**
   * Show `question`, or close the dialog when it is `undefined`. The same question again (the
   * same item: the host asks again after a reconnect) only updates whether it is live. `asker`
   * names a subagent that asks (e.g. `subagent “docs”`); without it, the agent asks.
   */
  show(question: SessionApproval | undefined, prompt: string | undefined, asker?: string): void {
    const { dialog, tool, command, turn, deny, offline } = this.#elements;
    const same = question !== undefined && question.itemId === this.#question?.itemId;
    const wasOpen = this.#question !== undefined;
    this.#question = question;
    if (question !== undefined && dialog.dataset["live"] !== String(question.live)) {
      offline.hidden = question.live;
      dialog.dataset["live"] = String(question.live);
    }
    if (same) return;
    if (question === undefined) {
      const focusInside = dialog.contains(document.activeElement) || document.activeElement === document.body;
      if (!wasOpen) return;
      dialog.close();
      dialog.removeAttribute("data-item-id");
      dialog.removeAttribute("data-asker");
      dialog.removeAttribute("data-live");
      // Back to where the user was, unless they have moved on. After Stop, focus stays with the
      // Stop button (or, once it is disabled, the browser's place for it): never on Start, where a
      // second Enter would start a new turn.
      if (focusInside && this.#returnFocus?.isConnected === true && !isDisabled(this.#returnFocus)) this.#returnFocus.focus();
      this.#returnFocus = undefined;
      return;
    }
    tool.textContent = question.tool;
    command.textContent = commandOf(question.args);
    if (this.#elements.asker !== undefined) this.#elements.asker.textContent = asker ?? "agent";
    dialog.dataset["asker"] = asker === undefined ? "agent" : "subagent";
    this.#showOffer(question);
    turn.textContent = prompt ?? "(a turn this page did not start)";
    dialog.dataset["itemId"] = question.itemId;
    if (!wasOpen) {
      const active = document.activeElement;
      this.#returnFocus = active instanceof HTMLElement && active !== document.body && !dialog.contains(active) ? active : undefined;
      dialog.show();
    }
    deny.focus();
  }

  /** One button per offered decision (a 2.0 host offers Approve and Deny); the grant's rule beside "Always allow". */
  #showOffer(question: SessionApproval): void {
    const { approve, deny, always, stop, grant } = this.#elements;
    const offered = new Set<ApprovalOffer>(question.decisions);
    approve.hidden = !offered.has("approve");
    deny.hidden = !offered.has("deny");
    if (always !== undefined) always.hidden = !offered.has("approveForSession");
    if (stop !== undefined) stop.hidden = !offered.has("denyAndStop");
    if (grant === undefined) return;
    grant.hidden = !offered.has("approveForSession");
    grant.textContent = offered.has("approveForSession") ? `“Always allow” approves ${ruleOf(question)} for the rest of this session.` : "";
  }

  #answer(decision: ApprovalOffer): void {
    const question = this.#question;
    if (question === undefined || !question.decisions.includes(decision)) return;
    // The session sends it now when the question is live, else when the host asks again; the page re-renders from its snapshot.
    if (decision === "deny" || decision === "denyAndStop") this.#onAnswer(question, decision, DENY_REASON);
    else this.#onAnswer(question, decision);
  }
}

/**
 * The rule an "Always allow" would create, in words: "this exact command" when the host's rule is
 * `exact` on the call's own tool and arguments; else the host's rule as it states it.
 */
export function ruleOf(question: Pick<SessionApproval, "tool" | "args" | "grant">): string {
  const rule = question.grant;
  if (rule === undefined || (rule.match === "exact" && rule.tool === question.tool && rule.args === question.args)) {
    return `this exact ${question.tool} call (the same arguments)`;
  }
  return `${rule.tool} calls matching “${rule.match}”${rule.args === undefined ? " with any arguments" : ` of ${commandOf(rule.args)}`}`;
}

/** A shell call's `command` as written; any other tool's arguments pretty-printed (or as sent, when not JSON). */
export function commandOf(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as Record<string, unknown>)["command"] === "string") {
      return (parsed as Record<string, string>)["command"] as string;
    }
    return JSON.stringify(parsed, null, 2);
  } catch {
    return args;
  }
}

function isDisabled(element: HTMLElement): boolean {
  return element instanceof HTMLButtonElement || element instanceof HTMLTextAreaElement ? element.disabled : false;
}
