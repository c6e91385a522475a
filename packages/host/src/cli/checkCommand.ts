/** `muse check`: the host conformance run (check/, runCheck) wired to `--spawn` or `--ws`. */
import { runCheck, spawnForCheck, webSocketForCheck } from "./check/index.js";
import type { HostTarget } from "./args.js";
import { ExitCodes, type ExitCode } from "./exitCodes.js";
import { readToken } from "./openedHost.js";
import { webSocketClass } from "./webSocketClass.js";

/**
 * Run every check scenario against the host `target` names (a fresh spawned host, or a fresh
 * WebSocket connection, per scenario), its sessions on `model` (default msp-check, the model that
 * plays the check's directives), print the table through `out`, and resolve with 0 when every
 * scenario passed, 1 otherwise.
 *
 * @example
 * ```ts
 * const code = await checkCommand(target, { out: (line) => process.stdout.write(`${line}\n`), color: false, env: process.env });
 * ```
 */
export async function checkCommand(
  target: HostTarget,
  options: { out: (line: string) => void; color: boolean; env: NodeJS.ProcessEnv; model?: string },
): Promise<ExitCode> {
  const open =
    target.kind === "spawn"
      ? spawnForCheck({
          command: target.command,
          args: target.args,
          framing: target.framing,
          stderr: target.showStderr === true ? "inherit" : "ignore",
          killGraceMs: 2_000,
        })
      : webSocketForCheck(target.url, { WebSocket: await webSocketClass(), ...optionalToken(readToken(target, options.env)) });
  const outcome = await runCheck({ open, out: options.out, color: options.color, ...(options.model === undefined ? {} : { model: options.model }) });
  return outcome.passed ? ExitCodes.completed : ExitCodes.failed;
}

function optionalToken(token: string | undefined): { token?: string } {
  return token === undefined ? {} : { token };
}
