/**
 * The operator's off-switch of `muse serve` (and its alias `muse-host serve`):
 * `MUSE_EXPERIMENTAL_SDK_ENABLED`. Unset, empty or on, the host runs; off, it refuses with one
 * line and an exit code of its own; any other value is a usage error, so a typo never decides.
 */

/** The environment variable that can switch `muse serve` off. */
export const SERVE_SWITCH_VARIABLE = "MUSE_EXPERIMENTAL_SDK_ENABLED";

/** What `muse serve` exits with when the switch is off (free in both the host's and muse's codes). */
export const SWITCHED_OFF_EXIT_CODE = 4;

/** What `muse serve` exits with for a value that is neither on nor off: the usage code. */
export const BAD_SWITCH_EXIT_CODE = 2;

const ON = ["1", "true", "on"];
const OFF = ["0", "false", "off"];

/** Why the host will not serve: the one line to print (without the `muse-host: ` prefix) and the exit code. */
export interface ServeRefusal {
  line: string;
  code: number;
}

/**
 * Read the switch from `env`: `undefined` when the host may serve, else the refusal. Values are
 * compared case-insensitively and as given (no trimming).
 */
export function serveRefusal(env: NodeJS.ProcessEnv): ServeRefusal | undefined {
  const value = env[SERVE_SWITCH_VARIABLE];
  if (value === undefined || value === "" || ON.includes(value.toLowerCase())) return undefined;
  if (OFF.includes(value.toLowerCase()))
    return {
      line: `muse serve is switched off (${SERVE_SWITCH_VARIABLE}=${value}); unset it or set it to 1 to run the host`,
      code: SWITCHED_OFF_EXIT_CODE,
    };
  return {
    line: `${SERVE_SWITCH_VARIABLE}=${JSON.stringify(value)} is neither on (1, true, on) nor off (0, false, off)`,
    code: BAD_SWITCH_EXIT_CODE,
  };
}
