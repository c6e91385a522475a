/**
 * The Approve/Deny dialog: the host's open `tool/approve` question of the running turn, with the
 * tool and the exact command (or arguments) it asks to run. A non-modal `<dialog>`, so the Stop
 * button stays usable while it is open: Stop answers the question `cancelled` (the SDK does it)
 * and the dialog closes. It is labelled by its heading and described by the command; opening it
 * moves focus to Deny (the choice that runs nothing), closing it gives focus back to where it
 * was. Tab moves between the buttons, Enter or Space presses one, Escape denies. The page
 * decides which question it shows; this only renders it and answers it through the SDK.
 */
import type { ApprovalDecision, ApprovalQuestion } from "@muse-code/sdk";

/** The dialog's elements, from index.html. */
export interface ApprovalDialogElements {
  dialog: HTMLDialogElement;
  /** The tool's name. */
  tool: HTMLElement;
  /** The command (a shell call's `command`) or the arguments as sent. */
  command: HTMLElement;
  /** The prompt of the turn that asks. */
  turn: HTMLElement;
  approve: HTMLButtonElement;
  deny: HTMLButtonElement;
}

/** Called after the user answered a question from the dialog. */
export type AnsweredListener = (question: ApprovalQuestion, decision: ApprovalDecision) => void;

/** The reason sent with a Deny (the host keeps it as the denied call's `error.message`). */
export const DENY_REASON = "denied in the Stop-button app";

/** Renders one open question at a time and answers it through `question.answer()`. */
export class ApprovalDialog {
  readonly #elements: ApprovalDialogElements;
  readonly #onAnswered: AnsweredListener;
  #question: ApprovalQuestion | undefined;
  /** Where focus was before the dialog opened; it goes back there when the dialog closes. */
  #returnFocus: HTMLElement | undefined;

  constructor(elements: ApprovalDialogElements, onAnswered: AnsweredListener) {
    this.#elements = elements;
    this.#onAnswered = onAnswered;
    elements.approve.addEventListener("click", () => this.#answer("approve"));
    elements.deny.addEventListener("click", () => this.#answer("deny"));
    elements.dialog.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      this.#answer("deny");
    });
  }

  /** The question on show, if any. */
  get question(): ApprovalQuestion | undefined {
    return this.#question;
  }

  /** Show `question` (the same one again changes nothing), or close the dialog when it is `undefined`. */
  show(question: ApprovalQuestion | undefined, prompt: string | undefined): void {
    if (question === this.#question) return;
    const { dialog, tool, command, turn, deny } = this.#elements;
    const wasOpen = this.#question !== undefined;
    this.#question = question;
    if (question === undefined) {
      const focusInside = dialog.contains(document.activeElement) || document.activeElement === document.body;
      dialog.close();
      dialog.removeAttribute("data-item-id");
      // Back to where the user was, unless they have moved on. After Stop, focus stays with the
      // Stop button (or, once it is disabled, the browser's place for it): never on Start, where a
      // second Enter would start a new turn.
      if (focusInside && this.#returnFocus?.isConnected === true && !isDisabled(this.#returnFocus)) this.#returnFocus.focus();
      this.#returnFocus = undefined;
      return;
    }
    tool.textContent = question.request.tool;
    command.textContent = commandOf(question.request.args);
    turn.textContent = prompt ?? "(a turn this page did not start)";
    dialog.dataset["itemId"] = question.request.itemId;
    if (!wasOpen) {
      const active = document.activeElement;
      this.#returnFocus = active instanceof HTMLElement && active !== document.body && !dialog.contains(active) ? active : undefined;
      dialog.show();
    }
    deny.focus();
  }

  #answer(decision: "approve" | "deny"): void {
    const question = this.#question;
    if (question === undefined) return;
    // `false`: it was answered or withdrawn meanwhile; the page re-renders from the SDK either way.
    if (decision === "approve" ? question.answer("approve") : question.answer("deny", DENY_REASON)) this.#onAnswered(question, decision);
  }
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
