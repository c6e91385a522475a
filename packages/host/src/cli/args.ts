/** The `muse` command line: parse argv into one command and its options, or a one-line usage error. */
import { splitCommand } from "./splitCommand.js";

/**
 * A bad command line: `message` is one line saying what is wrong; `command` names the command
 * whose help applies, when known. `muse` prints it and exits 2.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly command: MuseCommandName | undefined;
  constructor(message: string, command?: MuseCommandName) {
    super(message);
    this.command = command;
  }
}

/** The commands of `muse`. */
export type MuseCommandName = "info" | "run" | "resume" | "check";

const COMMANDS: readonly MuseCommandName[] = ["info", "run", "resume", "check"];

/** Every command a person can type: these, and `serve` (the host's, which the bin hands over before parsing). */
const ALL_COMMANDS = [...COMMANDS, "serve"].join(", ");

/** How to reach the host: a child process over stdio, or a WebSocket URL. */
export type HostTarget =
  | {
      kind: "spawn";
      command: string;
      args: string[];
      framing: "ndjson" | "content-length";
      /** Pass the host's stderr through to muse's (`--host-stderr`) instead of keeping its tail. */
      showStderr?: boolean;
    }
  | { kind: "ws"; url: string; tokenFile?: string };

/** A parsed command line. */
export type MuseArgs =
  { kind: "help"; command?: MuseCommandName } | { kind: "version" } | ({ kind: "command"; command: MuseCommandName; target: HostTarget } & MuseOptions);

/** The options of a command (those that do not apply to it are rejected by the parser). */
export interface MuseOptions {
  json: boolean;
  /** Colour and the progress line; undefined: decide from the terminal. */
  color?: boolean;
  record?: string;
  prompt?: string;
  session?: string;
  model?: string;
  keepInbox: boolean;
  after?: string;
  /** `--approve`: how tool/approve questions are answered; undefined: ask on a terminal, else none. */
  approve?: "ask" | "all" | "none";
  /** `--steer-stdin`: lines read from a stdin that is not a terminal (a pipe) steer the turn too. */
  steerStdin?: boolean;
}

/** Which options each command takes (connection options and --color go with every command). */
const ALLOWED: Record<MuseCommandName, readonly string[]> = {
  info: ["--json"],
  run: ["--json", "--record", "--session", "--model", "--keep-inbox", "--approve", "--steer-stdin"],
  resume: ["--json", "--record", "--session", "--after", "--approve"],
  check: ["--model"],
};

const VALUE_FLAGS = new Set(["--spawn", "--framing", "--ws", "--token-file", "--record", "--session", "--model", "--after", "--approve"]);
const BOOLEAN_FLAGS = new Set(["--json", "--keep-inbox", "--steer-stdin", "--color", "--no-color", "--host-stderr", "--help", "-h", "--version"]);

/**
 * Parse `muse`'s arguments (without `node` and the script). Options may come before or after the
 * command, as `--flag VALUE` or `--flag=VALUE`; `--` ends the options. Throws a {@link UsageError}
 * with a one-line message on anything wrong: an unknown command or option, a missing or repeated
 * value, an option the command does not take, no host or two, a run without a prompt.
 */
export function parseMuseArgs(argv: readonly string[]): MuseArgs {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const positionals: string[] = [];
  let command: MuseCommandName | undefined;
  let optionsEnded = false;
  const fail = (message: string): never => {
    throw new UsageError(message, command);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (optionsEnded || !arg.startsWith("-") || arg === "-") {
      // `muse serve` is the host's command line, which the bin hands over before this parser: first word only.
      if (command === undefined && positionals.length === 0 && arg === "serve")
        fail("serve must be the first word: muse serve --stdio … (muse serve --help lists its flags)");
      if (command === undefined && positionals.length === 0 && (COMMANDS as readonly string[]).includes(arg)) command = arg as MuseCommandName;
      else if (command === undefined && positionals.length === 0 && arg === "help") positionals.push(arg);
      else positionals.push(arg);
      continue;
    }
    if (arg === "--") {
      optionsEnded = true;
      continue;
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (VALUE_FLAGS.has(name)) {
      let value: string | undefined = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) fail(`${name} needs a value`);
      value = value as string;
      if (values.has(name)) fail(`${name} given twice`);
      if (value === "") fail(`${name} needs a non-empty value`);
      values.set(name, value);
    } else if (BOOLEAN_FLAGS.has(name)) {
      if (eq > 0) fail(`${name} takes no value`);
      flags.add(name);
    } else {
      fail(`unknown option ${name}`);
    }
  }
  if (flags.has("--version")) return { kind: "version" };
  if (positionals[0] === "help" && command === undefined) {
    const topic = positionals[1];
    if (topic === undefined) return { kind: "help" };
    if (!(COMMANDS as readonly string[]).includes(topic)) fail(`no help for ${JSON.stringify(topic)}: the commands are ${ALL_COMMANDS}`);
    return { kind: "help", command: topic as MuseCommandName };
  }
  if (flags.has("--help") || flags.has("-h")) return command === undefined ? { kind: "help" } : { kind: "help", command };
  if (command === undefined) {
    if (positionals.length > 0) fail(`unknown command ${JSON.stringify(positionals[0])}: the commands are ${ALL_COMMANDS}`);
    return fail("missing command");
  }
  const cmd = command as MuseCommandName;
  for (const flag of [...values.keys(), ...flags]) {
    if (["--spawn", "--framing", "--ws", "--token-file", "--host-stderr", "--color", "--no-color"].includes(flag)) continue;
    if (!ALLOWED[cmd].includes(flag)) fail(`muse ${cmd} does not take ${flag}`);
  }
  const options: MuseOptions = { json: flags.has("--json"), keepInbox: flags.has("--keep-inbox") };
  if (flags.has("--steer-stdin")) options.steerStdin = true;
  if (flags.has("--color") && flags.has("--no-color")) fail("--color and --no-color contradict each other");
  if (flags.has("--color")) options.color = true;
  if (flags.has("--no-color")) options.color = false;
  for (const [flag, key] of [
    ["--record", "record"],
    ["--session", "session"],
    ["--model", "model"],
    ["--after", "after"],
  ] as const) {
    const value = values.get(flag);
    if (value !== undefined) options[key] = value;
  }
  const approve = values.get("--approve");
  if (approve !== undefined) {
    if (approve !== "ask" && approve !== "all" && approve !== "none") fail(`--approve must be ask, all or none, got ${JSON.stringify(approve)}`);
    options.approve = approve as "ask" | "all" | "none";
  }
  if (cmd === "run") {
    if (positionals.length === 0) fail('muse run needs a prompt: muse run "PROMPT" …');
    if (positionals.length > 1) fail(`muse run takes one prompt; quote it: muse run "${positionals.join(" ")}"`);
    options.prompt = positionals[0] as string;
  } else if (positionals.length > 0) {
    fail(`muse ${cmd} takes no argument ${JSON.stringify(positionals[0])}`);
  }
  if (cmd === "resume" && options.session === undefined) fail("muse resume needs --session ID");
  return { kind: "command", command: cmd, target: hostTarget(values, flags, fail), ...options };
}

function hostTarget(values: Map<string, string>, flags: Set<string>, fail: (message: string) => never): HostTarget {
  const spawn = values.get("--spawn");
  const ws = values.get("--ws");
  const framing = values.get("--framing");
  const tokenFile = values.get("--token-file");
  if (spawn !== undefined && ws !== undefined) fail("give one host: --spawn or --ws, not both");
  if (spawn === undefined && ws === undefined) fail('no host: give --spawn "CMD ARGS…" or --ws URL');
  if (ws !== undefined) {
    if (framing !== undefined) fail("--framing applies to --spawn only (a WebSocket carries one message per frame)");
    if (flags.has("--host-stderr")) fail("--host-stderr applies to --spawn only");
    let url: URL;
    try {
      url = new URL(ws);
    } catch {
      return fail(`--ws needs a URL such as ws://127.0.0.1:8080/msp, got ${JSON.stringify(ws)}`);
    }
    if (url.protocol !== "ws:" && url.protocol !== "wss:") fail(`--ws needs a ws:// or wss:// URL, got ${JSON.stringify(ws)}`);
    return tokenFile === undefined ? { kind: "ws", url: ws } : { kind: "ws", url: ws, tokenFile };
  }
  if (tokenFile !== undefined) fail("--token-file applies to --ws only");
  if (framing !== undefined && framing !== "ndjson" && framing !== "content-length")
    fail(`--framing must be ndjson or content-length, got ${JSON.stringify(framing)}`);
  let words: string[];
  try {
    words = splitCommand(spawn as string);
  } catch (error) {
    return fail(`--spawn: ${(error as Error).message}`);
  }
  const [command, ...args] = words;
  if (command === undefined) return fail("--spawn needs a command");
  const target: HostTarget = { kind: "spawn", command, args, framing: (framing as "ndjson" | "content-length" | undefined) ?? "ndjson" };
  if (flags.has("--host-stderr")) target.showStderr = true;
  return target;
}
