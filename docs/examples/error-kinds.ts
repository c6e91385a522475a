/**
 * Runtime failures reject with MspError. `kind` says what happened, and checking it narrows
 * `data` to what that kind carries. (Mistakes in your arguments are different: see
 * argument-mistakes.ts.)
 */
import { MspError } from "@muse-code/sdk";
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

// #region describe
/** One line saying what went wrong; anything that is not an MspError is a bug, rethrown. */
function describe(error: unknown): string {
  if (!(error instanceof MspError)) throw error;
  switch (error.kind) {
    case "commandRejected":
      return `commandRejected: the host refused it (${error.data.reason})`;
    case "rpcError":
      return `rpcError: ${error.data.code} ${error.data.message}`;
    case "timeout":
      return `timeout: nothing after ${error.data.timeoutMs} ms`;
    case "aborted":
      return `aborted: ${error.cause instanceof Error ? error.cause.message : String(error.cause)}`;
    case "connectionClosed":
      return `connectionClosed: ${error.data.reason}`;
    case "protocol":
      return `protocol: the host broke MSP (${error.data.problem})`;
  }
}
// #endregion describe

/** Run `attempt`, which must fail, and print how. */
async function show(attempt: Promise<unknown>): Promise<void> {
  try {
    await attempt;
    console.log("it succeeded?!");
  } catch (error) {
    console.log(describe(error));
  }
}

await using msp = spawnReferenceHost({ script: exampleModelPath("run-tests") });
const { sessionId } = await msp.command("session/create", {});

// The host refuses: there is no such turn in this session.
await show(msp.cancelTurn({ sessionId, turnId: "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f10" }));

// The host does not know the method.
await show(msp.command("session/rename", { sessionId, name: "tests" }));

// A running turn (the tests take ~10 s) and a wait bounded to 100 ms.
const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests" }] });
const { turnId } = await turn.accepted;
await show(msp.turns.terminalOf(turnId, { timeoutMs: 100 }));

// Your own AbortSignal fires; the error's `cause` is the signal's reason.
const leaving = new AbortController();
const wait = msp.turns.terminalOf(turnId, { signal: leaving.signal });
leaving.abort(new Error("the user left the page"));
await show(wait);

// The connection closes while the turn is still running: every wait settles at once.
const shown = show(turn.waitForTerminal({ timeoutMs: 30_000 })); // handle it before it can reject
await msp.close();
await shown;
