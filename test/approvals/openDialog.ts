/**
 * Test helper for approvals: a `client.onApproval` handler that stands for a dialog left open. It
 * answers only when the test says so (perhaps too late), and keeps the abort signal it was given.
 */
import type { MspClient, ToolApproveResult } from "../../src/index.js";

/** The open dialog's handle. */
export interface OpenDialog {
  /** The abort signal of the last question the handler was given (undefined before one). */
  readonly signal: AbortSignal | undefined;
  /** Answer the last question, as a dialog's button would; nothing if none was asked. */
  answer(result: ToolApproveResult): void;
}

/** Install the handler on `client`; its answers settle only through {@link OpenDialog.answer}. */
export function openDialog(client: MspClient): OpenDialog {
  let signal: AbortSignal | undefined;
  let settle: ((result: ToolApproveResult) => void) | undefined;
  client.onApproval((_request, context) => {
    signal = context.signal;
    return new Promise((resolve) => (settle = resolve));
  });
  return {
    get signal() {
      return signal;
    },
    answer: (result) => settle?.(result),
  };
}
