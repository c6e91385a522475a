/**
 * runMuse: the `muse` command line, from argv to an exit code. It parses the arguments, opens the
 * connection, runs one command, closes the connection, and turns every failure into one line on
 * stderr and its exit code.
 */
import { readFileSync } from "node:fs";
import { MspError } from "@muse-code/sdk";
import { parseMuseArgs, UsageError, type MuseArgs } from "./args.js";
import type { CommandContext } from "./commandContext.js";
import { checkCommand } from "./checkCommand.js";
import { ExitCodes } from "./exitCodes.js";
import { COMMAND_HELP, HELP, USAGE } from "./help.js";
import { ApprovalPrompt } from "./approvalPrompt.js";
import { openHost, type OpenedHost } from "./openedHost.js";
import { infoCommand } from "./infoCommand.js";
import type { Interrupts } from "./interrupts.js";
import { resumeCommand } from "./resumeCommand.js";
import { describeError } from "./describeError.js";
import { PromptInput, type PromptStream, type TypedLine } from "./promptInput.js";
import { runTurnCommand } from "./runCommand.js";
import { Screen } from "./screen.js";
import { JsonView } from "./jsonView.js";
import { TextView } from "./textView.js";
import { ShownTree } from "./shownTree.js";
import { styles } from "./style.js";

/** What `muse` runs with: its streams, environment and Ctrl-C (the process's, or a test's). */
export interface MuseIo {
  stdout: { write(text: string): unknown; readonly isTTY?: boolean; readonly columns?: number };
  stderr: { write(text: string): unknown };
  /** Where `--approve ask` reads its answers (a key on a terminal, else a line); none: `ask` denies. */
  stdin?: PromptStream;
  env: NodeJS.ProcessEnv;
  interrupts: Interrupts;
}

/** muse's version: the package's. */
export function museVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return manifest.version;
}

/**
 * Run `muse` with `argv` (without `node` and the script) and resolve with its exit code (see
 * ExitCodes). Never rejects: an unexpected failure is one line on stderr and exit 1.
 */
export async function runMuse(argv: readonly string[], io: MuseIo): Promise<number> {
  // Errors go to stderr, after the progress line is erased and any unfinished stdout line ended
  // (on a terminal both show on one screen). The first one is the exit event's `why` (--json).
  const shown: { screen?: Screen } = {};
  let firstError: string | undefined;
  const err = (line: string) => {
    shown.screen?.clearForError();
    firstError ??= line;
    io.stderr.write(`muse: ${line}\n`);
  };
  let args: MuseArgs;
  try {
    args = parseMuseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err(error.message);
    io.stderr.write(`${error.command === undefined ? USAGE : COMMAND_HELP[error.command].split("\n\n")[0]}\n(muse --help says more)\n`);
    return ExitCodes.usage;
  }
  if (args.kind === "version") {
    io.stdout.write(`${museVersion()}\n`);
    return ExitCodes.completed;
  }
  if (args.kind === "help") {
    io.stdout.write(`${args.command === undefined ? HELP : COMMAND_HELP[args.command]}\n`);
    return ExitCodes.completed;
  }
  const terminal = io.stdout.isTTY === true;
  const color = args.color ?? (terminal && (io.env["NO_COLOR"] ?? "") === "");
  if (args.command === "check") {
    try {
      const out = (line: string) => void io.stdout.write(`${line}\n`);
      return await checkCommand(args.target, { out, color, env: io.env, ...(args.model === undefined ? {} : { model: args.model }) });
    } catch (error) {
      err(describeError(error));
      return ExitCodes.failed;
    }
  }
  // Ctrl-C from the moment the host may be running: with no handler, SIGINT would kill muse at once
  // and leave a spawned host behind. A press before the command installs its own handler is kept
  // here and honoured as "quit" just before the command starts.
  let earlyPress = 0;
  const offEarly = io.interrupts.on((press) => (earlyPress = press));
  const connectAndRun = async (): Promise<number> => {
    let host: OpenedHost;
    try {
      host = await openHost(args.target, { ...(args.record === undefined ? {} : { record: args.record }), env: io.env });
    } catch (error) {
      err(MspError.is(error) ? `cannot connect: ${error.message}` : describeError(error));
      // A host that refused or dropped the connection is a lost connection; a token or --record file
      // that cannot be read or created, a timeout, a bad subprotocol are failures.
      return MspError.is(error) && error.kind === "connectionClosed" ? ExitCodes.connectionLost : ExitCodes.failed;
    }
    const out = (line: string) => void io.stdout.write(`${line}\n`);
    // Whoever reads stdout went away (\`muse run … | head\`): nothing more can be shown, so stop as
    // a double Ctrl-C would: the turn is cancelled and the host closed at once.
    const keys = new Set<() => void>();
    const interrupts = stdoutClosedInterrupts(io, keys);
    const screen = new Screen(io.stdout, { progress: color && !args.json });
    shown.screen = screen;
    // The subagent trees below the shown turns: the command feeds it, the view and the prompt read it.
    const tree = new ShownTree();
    const view = args.json ? new JsonView(out) : new TextView(screen, styles(color), { showTurnIds: args.command === "resume", tree });
    // tool/approve: --approve, by default a y/N prompt when stdin is a terminal, else deny (saying to pass --approve).
    const input = io.stdin === undefined ? undefined : new PromptInput(io.stdin);
    const policy = args.approve ?? (input?.raw === true ? "ask" : "none");
    const promptOnScreen = terminal && !args.json;
    const prompt = new ApprovalPrompt({
      policy,
      view,
      tree,
      ...(input === undefined ? {} : { input }),
      // The user reads the terminal, not a piped stdout (or NDJSON): ask there too.
      ...(policy === "ask" && input?.raw === true && !promptOnScreen ? { echo: (text: string) => void io.stderr.write(text) } : {}),
      interrupt: () => {
        for (const press of [...keys]) press();
      },
    });
    const ctx: CommandContext = {
      host,
      view,
      interrupts,
      err,
      out,
      holdQuestions: () => prompt.hold(),
      tree,
      // Typed lines steer from a terminal; from a pipe only with --steer-stdin, so a script's
      // piped answers (`printf 'y\n' | muse run --approve ask …`) stay answers.
      ...(input === undefined || (!input.raw && args.steerStdin !== true) ? {} : { typedLines: (onLine: (line: TypedLine) => void) => input.listen(onLine) }),
    };
    const detachPrompt = args.command === "info" ? () => {} : prompt.attach(host.client);
    const offStopping = interrupts.on(() => prompt.stopping());
    let code: number;
    if (earlyPress > 0) {
      // Ctrl-C came while connecting: nothing was started, so quit as a second press would.
      err("interrupted");
      offStopping();
      detachPrompt();
      input?.close();
      screen.close();
      await host.kill().catch(() => {});
      return ExitCodes.cancelled;
    }
    try {
      if (args.command === "info") code = await quitOnInterrupt(ctx, () => infoCommand(ctx, { json: args.json }));
      else if (args.command === "run") {
        const options = { prompt: args.prompt as string, keepInbox: args.keepInbox };
        code = await runTurnCommand(ctx, {
          ...options,
          ...(args.session === undefined ? {} : { session: args.session }),
          ...(args.model === undefined ? {} : { model: args.model }),
        });
      } else code = await resumeCommand(ctx, { session: args.session as string, ...(args.after === undefined ? {} : { after: args.after }) });
    } catch (error) {
      if (MspError.is(error) && error.kind === "connectionClosed") {
        err(`connection lost: ${String(error.data.reason ?? error.message)}`);
        for (const line of host.stderrTail()) err(`  host: ${line}`);
        code = ExitCodes.connectionLost;
      } else {
        err(describeError(error));
        code = ExitCodes.failed;
      }
    }
    offStopping();
    detachPrompt();
    input?.close();
    if (args.command !== "info") view.end(code, code === ExitCodes.completed ? undefined : firstError);
    screen.close();
    await host.close().catch(() => {});
    return code;
  };
  try {
    return await connectAndRun();
  } finally {
    offEarly();
  }
}

/**
 * `io.interrupts`, plus Ctrl-C read as a key at the prompt (raw mode: each function `keys` holds
 * is a press), plus two presses at once when stdout breaks (EPIPE: its reader is gone), counted
 * together.
 */
function stdoutClosedInterrupts(io: MuseIo, keys: Set<() => void>): Interrupts {
  const stdout = io.stdout as { on?: (event: "error", listener: (error: NodeJS.ErrnoException) => void) => unknown };
  return {
    on(handler) {
      let presses = 0;
      const off = io.interrupts.on((press) => {
        presses = Math.max(press, presses + 1);
        handler(presses);
      });
      let broken = false;
      const onError = (error: NodeJS.ErrnoException) => {
        if (broken || (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED")) return;
        broken = true;
        if (presses < 2) handler((presses = 2));
      };
      stdout.on?.("error", onError);
      const onKey = () => handler(++presses);
      keys.add(onKey);
      return () => {
        keys.delete(onKey);
        off();
        (io.stdout as { off?: (event: "error", listener: (error: NodeJS.ErrnoException) => void) => unknown }).off?.("error", onError);
      };
    },
  };
}

/** Run a command that has nothing to stop: Ctrl-C closes the connection at once and exits 130. */
async function quitOnInterrupt(ctx: CommandContext, command: () => Promise<number>): Promise<number> {
  let quit!: (code: number) => void;
  const quitting = new Promise<number>((resolve) => (quit = resolve));
  let interrupted = false;
  const off = ctx.interrupts.on(() => {
    interrupted = true;
    ctx.err("interrupted");
    void ctx.host.kill().then(() => quit(ExitCodes.cancelled));
  });
  try {
    // Once interrupted, the command's own failure (its connection closed under it) is not the outcome.
    return await Promise.race([command().catch((error: unknown) => (interrupted ? quitting : Promise.reject(error))), quitting]);
  } finally {
    off();
  }
}
