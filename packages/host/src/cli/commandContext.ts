/** CommandContext: what each `muse` command runs with: the connection, the view, Ctrl-C, stderr. */
import type { OpenedHost } from "./openedHost.js";
import type { Interrupts } from "./interrupts.js";
import type { TypedLine } from "./promptInput.js";
import type { SessionView } from "./sessionView.js";
import type { ShownTree } from "./shownTree.js";

/** What a command gets from the dispatcher. */
export interface CommandContext {
  host: OpenedHost;
  view: SessionView;
  interrupts: Interrupts;
  /** One line to stderr, prefixed `muse: `. */
  err: (line: string) => void;
  /** One line to stdout (info). */
  out: (line: string) => void;
  /** Hold the host's approval questions until the returned function is called (see ApprovalPrompt.hold). */
  holdQuestions: () => () => void;
  /**
   * Listen to the lines the user types while no question is open (stdin, see PromptInput.listen);
   * returns the function that stops. Absent when there is no stdin.
   */
  typedLines?: (onLine: (line: TypedLine) => void) => () => void;
  /**
   * The subagent trees the command feeds with every notification, which the view and the
   * approval prompt read (nesting, names); a command without one keeps its own.
   */
  tree?: ShownTree;
}
