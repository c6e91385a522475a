/** The shell tool: runs `/bin/sh -c` in its own process group and kills the whole group on abort. */
import { spawn } from "node:child_process";

/**
 * What every tool receives: the turn's signal, and a sink for output as it arrives.
 *
 * @example
 * ```ts
 * const exec: ToolExecution = { signal, onOutput: (out) => console.error(out) };
 * ```
 */
export interface ToolExecution {
  /** Aborts when the turn is cancelled; the tool promises to observe it. */
  signal: AbortSignal;
  /** Called with the whole visible output so far, each time it grows. */
  onOutput?: (visibleOutput: string, truncated: boolean) => void;
}

/**
 * How a tool call ended. `status` maps onto the toolCall item's final status.
 *
 * @example
 * ```ts
 * if (result.status === "failed") console.error(result.failureReason); // "exit code 3"
 * ```
 */
export interface ToolResult {
  status: "completed" | "failed" | "cancelled";
  visibleOutput: string;
  truncated: boolean;
  failureReason?: string;
  /** Exit code, or `null` when the process was ended by a signal or never ran. */
  exitCode: number | null;
  /** The pid of the spawned `/bin/sh` (also its process-group id), when it spawned. */
  pid?: number;
}

/**
 * Options of {@link runShell}.
 *
 * @example
 * ```ts
 * await runShell("make", { signal }, { killGraceMs: 500, outputCapBytes: 4096 });
 * ```
 */
export interface ShellOptions {
  /** @unit milliseconds between SIGTERM and SIGKILL of the group on abort (default 2000) */
  killGraceMs?: number;
  /** @unit bytes of output kept in `visibleOutput` (default 65536) */
  outputCapBytes?: number;
  /** Called once with the shell's pid right after it spawns. */
  onSpawn?: (pid: number) => void;
}

/**
 * Default grace between SIGTERM and SIGKILL.
 * @unit milliseconds
 *
 * @example
 * ```ts
 * const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS; // 2000
 * ```
 */
export const DEFAULT_KILL_GRACE_MS = 2000;
/**
 * Default cap of a tool call's visible output.
 * @unit bytes
 *
 * @example
 * ```ts
 * const cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES; // 65536
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

/**
 * Runs `command` with `/bin/sh -c` as the leader of a new process group, capturing stdout and
 * stderr (interleaved, capped at `outputCapBytes`). On `exec.signal` abort it sends SIGTERM to
 * the whole group, then SIGKILL after `killGraceMs`, and resolves only once every pipe has closed:
 * the call is drained, never abandoned. When the shell exits by itself, anything it left running
 * in its group is SIGKILLed, so no orphan outlives the call.
 *
 * @example
 * ```ts
 * const result = await runShell("echo hi", { signal: AbortSignal.timeout(5000) });
 * result.visibleOutput; // "hi\n"
 * ```
 */
export function runShell(command: string, exec: ToolExecution, options: ShellOptions = {}): Promise<ToolResult> {
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let truncated = false;
  const visible = () => Buffer.concat(kept).toString("utf8");

  if (exec.signal.aborted) {
    return Promise.resolve({ status: "cancelled", visibleOutput: "", truncated: false, failureReason: "turn cancelled", exitCode: null });
  }

  return new Promise<ToolResult>((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const pid = child.pid;
    let graceTimer: NodeJS.Timeout | undefined;
    let aborted = false;
    let exitCode: number | null = null;
    let spawnError: Error | undefined;

    const onData = (chunk: Buffer) => {
      if (truncated) return;
      const room = cap - keptBytes;
      if (chunk.length > room) {
        if (room > 0) kept.push(chunk.subarray(0, room));
        keptBytes = cap;
        truncated = true;
      } else {
        kept.push(chunk);
        keptBytes += chunk.length;
      }
      exec.onOutput?.(visible(), truncated);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);

    const onAbort = () => {
      if (pid === undefined || aborted) return;
      aborted = true;
      killGroup(pid, "SIGTERM");
      graceTimer = setTimeout(() => killGroup(pid, "SIGKILL"), graceMs);
    };
    exec.signal.addEventListener("abort", onAbort, { once: true });
    if (pid !== undefined) options.onSpawn?.(pid);

    child.on("error", (error) => {
      spawnError = error;
      if (pid === undefined) {
        exec.signal.removeEventListener("abort", onAbort);
        resolve({ status: "failed", visibleOutput: "", truncated: false, failureReason: `spawn failed: ${error.message}`, exitCode: null });
      }
    });
    child.on("exit", (code) => {
      exitCode = code;
      // The leader is gone: nothing in its group may outlive it (this also closes held pipes).
      if (pid !== undefined && !aborted) killGroup(pid, "SIGKILL");
    });
    child.on("close", (code) => {
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      exec.signal.removeEventListener("abort", onAbort);
      if (pid !== undefined) killGroup(pid, "SIGKILL"); // stragglers that closed their pipes
      const base = { visibleOutput: visible(), truncated, exitCode: exitCode ?? code };
      const withPid = pid === undefined ? base : { ...base, pid };
      if (spawnError !== undefined) {
        resolve({ ...withPid, status: "failed", failureReason: `spawn failed: ${spawnError.message}` });
      } else if (aborted) {
        resolve({ ...withPid, status: "cancelled", failureReason: "turn cancelled" });
      } else if (exitCode === 0) {
        resolve({ ...withPid, status: "completed" });
      } else if (exitCode === null) {
        resolve({ ...withPid, status: "failed", failureReason: `killed by ${child.signalCode ?? "signal"}` });
      } else {
        resolve({ ...withPid, status: "failed", failureReason: `exit code ${exitCode}` });
      }
    });
  });
}
