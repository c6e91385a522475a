/** The shell tool: runs `/bin/sh -c` in its own process group and kills the whole group on abort. */
import { spawn } from "node:child_process";
import { traceMark, tracing } from "../server/traceMarks.js";

/** What every tool receives: the turn's signal, and a sink for output as it arrives. */
export interface ToolExecution {
  /** Aborts when the turn is cancelled; the tool promises to observe it. */
  signal: AbortSignal;
  /** Called with the whole visible output so far, each time it grows. */
  onOutput?: (visibleOutput: string, truncated: boolean) => void;
}

/** How a tool call ended. `status` maps onto the toolCall item's final status. */
export interface ToolResult {
  status: "completed" | "failed" | "cancelled";
  visibleOutput: string;
  truncated: boolean;
  failureReason?: string;
  /** Exit code, or `null` when the process was ended by a signal or never ran. */
  exitCode: number | null;
  /** The pid of the spawned `/bin/sh` (also its process-group id), when it spawned. */
  pid?: number;
  /**
   * True when processes outside the tool's process group still held its output pipes and the host
   * stopped waiting for them (see {@link TOOL_PROCESSES_ESCAPED}).
   */
  escaped?: boolean;
}

/** Options of {@link runShell}. */
export interface ShellOptions {
  /** @unit milliseconds between SIGTERM and SIGKILL of the group on abort (default 2000) */
  killGraceMs?: number;
  /** @unit bytes of output kept in `visibleOutput` (default 65536) */
  outputCapBytes?: number;
  /** Called once with the shell's pid (its process-group id) synchronously right after it spawns. */
  onSpawn?: (pid: number) => void;
  /**
   * Called once with the shell's pid when the call ends, after the last SIGKILL of its process
   * group: nothing of the group runs on (processes that left it, see {@link TOOL_PROCESSES_ESCAPED}, may).
   */
  onGroupEnd?: (pid: number) => void;
}

/**
 * Default grace between SIGTERM and SIGKILL.
 * @unit milliseconds
 *
 * @example
 * ```ts
 * const models = new Map([["default", loadScriptedModel(exampleModelPath("run-tests"), "default")]]);
 * const host = createHost({ models, defaultModel: "default", killGraceMs: DEFAULT_KILL_GRACE_MS * 2 }); // a cancelled shell tool: 4 s from SIGTERM to SIGKILL
 * ```
 */
export const DEFAULT_KILL_GRACE_MS = 2000;
/**
 * Default cap of a tool call's visible output.
 * @unit bytes
 *
 * @example
 * ```ts
 * const models = new Map([["default", loadScriptedModel(exampleModelPath("run-tests"), "default")]]);
 * const host = createHost({ models, defaultModel: "default", outputCapBytes: DEFAULT_OUTPUT_CAP_BYTES * 4 }); // a tool call's visibleOutput keeps 256 KiB
 * ```
 */
export const DEFAULT_OUTPUT_CAP_BYTES = 64 * 1024;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** Process groups of shell tools that are running now (their leaders' pids). */
const liveGroups = new Set<number>();

/**
 * Sends `signal` (default SIGKILL) to the process group of every shell tool still running in this
 * process, and returns how many groups were signalled. The CLI uses it when a second SIGTERM,
 * SIGINT or SIGHUP arrives while a shutdown is still draining.
 */
export function killAllToolGroups(signal: NodeJS.Signals = "SIGKILL"): number {
  for (const pid of liveGroups) killGroup(pid, signal);
  return liveGroups.size;
}

/**
 * The `error` a tool call carries when processes left its process group (e.g. `setsid`) and kept
 * its output pipes open: the host stopped waiting for them and did not kill them.
 */
export const TOOL_PROCESSES_ESCAPED = {
  name: "ToolProcessesEscaped",
  code: "TOOL_PROCESSES_ESCAPED",
  message: "processes left the tool's process group and kept its output open; the host stopped waiting for them and could not kill them",
} as const;

/** The length of the longest prefix of `buf` that does not end inside a UTF-8 sequence. */
function utf8SafeLength(buf: Buffer): number {
  const end = buf.length;
  // Look back at most 3 bytes for the lead byte of the last sequence.
  for (let i = end - 1; i >= 0 && i >= end - 4; i--) {
    const b = buf[i]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return end - i >= need ? end : i;
  }
  return end;
}

/**
 * Runs `command` with `/bin/sh -c` as the leader of a new process group, capturing stdout and
 * stderr (interleaved, capped at `outputCapBytes`, never splitting a UTF-8 character). On
 * `exec.signal` abort it sends SIGTERM to the whole group, then SIGKILL after `killGraceMs`, and
 * resolves once every pipe has closed: the call is drained, never abandoned. When the shell exits
 * by itself, anything it left running in its group is SIGKILLed, so no orphan outlives the call.
 *
 * A process that left the group (`setsid`) cannot be killed through it. If the pipes are still open
 * `killGraceMs` after the group was SIGKILLed (or after the shell exited and its group was
 * killed), the host stops reading them and resolves anyway with `escaped: true`.
 */
export function runShell(command: string, exec: ToolExecution, options: ShellOptions = {}): Promise<ToolResult> {
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES;
  let kept: Buffer[] = [];
  let keptBytes = 0;
  let truncated = false;
  const visible = () => Buffer.concat(kept).toString("utf8");

  if (exec.signal.aborted) {
    return Promise.resolve({ status: "cancelled", visibleOutput: "", truncated: false, failureReason: "turn cancelled", exitCode: null });
  }

  return new Promise<ToolResult>((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    if (!child.stdout || !child.stderr) {
      // Out of descriptors (EMFILE, ENFILE): Node made no pipes and reports why in an 'error' event.
      child.once("error", (error) =>
        resolve({ status: "failed", visibleOutput: "", truncated: false, failureReason: `spawn failed: ${error.message}`, exitCode: null }),
      );
      return;
    }
    const pid = child.pid;
    if (tracing) traceMark("tool.spawn", String(pid));
    if (pid !== undefined) {
      liveGroups.add(pid);
      options.onSpawn?.(pid); // first, in the same event-loop turn as the spawn: a host killed after it leaves the group on record
    }
    let graceTimer: NodeJS.Timeout | undefined;
    let escapeTimer: NodeJS.Timeout | undefined;
    let aborted = false;
    let exited = false;
    let escaped = false;
    let exitCode: number | null = null;
    let spawnError: Error | undefined;

    const onData = (chunk: Buffer) => {
      if (truncated) return;
      const room = cap - keptBytes;
      if (chunk.length > room) {
        if (room > 0) kept.push(chunk.subarray(0, room));
        const all = Buffer.concat(kept);
        const safe = all.subarray(0, utf8SafeLength(all));
        kept = [safe];
        keptBytes = safe.length;
        truncated = true;
      } else {
        kept.push(chunk);
        keptBytes += chunk.length;
      }
      exec.onOutput?.(visible(), truncated);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);

    // The pipes are held open by processes outside the group: stop waiting for them.
    const armEscapeTimer = () => {
      if (escapeTimer !== undefined) return;
      escapeTimer = setTimeout(() => {
        escaped = true;
        child.stdout.destroy();
        child.stderr.destroy();
      }, graceMs);
    };

    const onAbort = () => {
      // A cancel after the shell exited is too late to change the outcome: its group is already
      // SIGKILLed and the call ends as its exit status says.
      if (pid === undefined || aborted || exited) return;
      aborted = true;
      if (tracing) traceMark("tool.abort", String(pid));
      killGroup(pid, "SIGTERM");
      if (tracing) traceMark("tool.sigterm", String(pid));
      graceTimer = setTimeout(() => {
        killGroup(pid, "SIGKILL");
        armEscapeTimer();
      }, graceMs);
    };
    exec.signal.addEventListener("abort", onAbort, { once: true });

    child.on("error", (error) => {
      spawnError = error;
      if (pid === undefined) {
        exec.signal.removeEventListener("abort", onAbort);
        resolve({ status: "failed", visibleOutput: "", truncated: false, failureReason: `spawn failed: ${error.message}`, exitCode: null });
      }
    });
    child.on("exit", (code) => {
      if (tracing) traceMark("tool.exit", String(pid));
      exited = true;
      exitCode = code;
      // The leader is gone: nothing in its group may outlive it (this also closes held pipes).
      // When cancelled, the rest of the group keeps its grace; the grace timer SIGKILLs it.
      if (pid !== undefined && !aborted) {
        killGroup(pid, "SIGKILL");
        armEscapeTimer();
      }
    });
    child.on("close", (code) => {
      if (tracing) traceMark("tool.closed", String(pid));
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      if (escapeTimer !== undefined) clearTimeout(escapeTimer);
      exec.signal.removeEventListener("abort", onAbort);
      if (pid !== undefined) {
        killGroup(pid, "SIGKILL"); // stragglers that closed their pipes
        liveGroups.delete(pid);
        options.onGroupEnd?.(pid);
      }
      const base: ToolResult = { status: "failed", visibleOutput: visible(), truncated, exitCode: exitCode ?? code };
      if (pid !== undefined) base.pid = pid;
      if (escaped) base.escaped = true;
      if (spawnError !== undefined) {
        resolve({ ...base, status: "failed", failureReason: `spawn failed: ${spawnError.message}` });
      } else if (aborted) {
        resolve({ ...base, status: "cancelled", failureReason: "turn cancelled" });
      } else if (exitCode === 0) {
        resolve({ ...base, status: "completed" });
      } else if (exitCode === null) {
        resolve({ ...base, status: "failed", failureReason: `killed by ${child.signalCode ?? "signal"}` });
      } else {
        resolve({ ...base, status: "failed", failureReason: `exit code ${exitCode}` });
      }
    });
  });
}
