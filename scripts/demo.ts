/**
 * `npm run demo`: the Stop-button app against the reference host, in one command. Builds the
 * packages if @muse-code/host's dist/ lacks the host or the app, starts
 * `muse-host serve --ws 127.0.0.1:PORT --ui --script packages/host/models/demo.json`, and prints the URL to
 * open (it carries the host's token in its fragment). Ctrl-C stops the host cleanly: running
 * turns are cancelled and their tools drained; a second Ctrl-C stops the drain. With
 * `--subagents` the model is packages/host/models/demo-subagents.json instead: a turn that delegates to two
 * subagents, one of which delegates again (issue 23), so one Stop stops a tree.
 *
 *   npm run demo [-- --port N] [--build] [--subagents] [-- more muse-host serve flags, e.g. --data DIR]
 *
 * `--port 0` picks a free port. The host runs in its own process group, so the terminal's Ctrl-C
 * reaches this script alone and the host gets exactly one signal per Ctrl-C.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The demo's port unless `--port` says otherwise ("MUSE" on a phone keypad). */
const DEFAULT_PORT = 6873;
/** After the host was asked to stop, how long until it is killed. @unit milliseconds */
const STOP_BOUND_MS = 15_000;
/** Signals closer together than this are one press, relayed twice. @unit milliseconds */
const REPEAT_MS = 500;

const { values, positionals } = parseArgs({
  options: {
    port: { type: "string", default: String(DEFAULT_PORT) },
    build: { type: "boolean", default: false },
    subagents: { type: "boolean", default: false },
  },
  allowPositionals: true,
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`npm run demo: --port needs a port number (0 for any free port), got ${JSON.stringify(values.port)}`);
  process.exit(2);
}

const HOST = join(ROOT, "packages", "host");
const cli = join(HOST, "dist", "serve", "main.js");
if (values.build || !existsSync(cli) || !existsSync(join(HOST, "dist", "demo", "index.html"))) {
  console.log("npm run demo: building the packages (npm run build)…");
  const built = spawnSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

/** The demo's model: the build-and-deploy turn, or (`--subagents`) the release turn and its subagent tree. */
const model = join(HOST, "models", values.subagents ? "demo-subagents.json" : "demo.json");
const args = [cli, "serve", "--ws", `127.0.0.1:${port}`, "--ui", "--script", model, ...positionals];
const host = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "inherit", "pipe"], detached: true });

// Pass the host's stderr through, line by line, but its one "open" line (which carries the token)
// is printed once, as the URL to open, where it cannot be missed.
let pending = "";
host.stderr.setEncoding("utf8").on("data", (chunk: string) => {
  pending += chunk;
  let newline = pending.indexOf("\n");
  while (newline >= 0) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    newline = pending.indexOf("\n");
    const open = /^muse-host: open (http:\/\/\S+)$/.exec(line);
    if (open === null) process.stderr.write(`${line}\n`);
    else {
      const what = values.subagents ? "watch its subagents start, press Stop, and watch the tree stop" : "press Stop, and watch the build drain";
      console.log(`\n  Open the Stop-button app: ${open[1]}\n  Start a turn, ${what}. Ctrl-C stops the host.\n`);
    }
  }
});

let stopping: NodeJS.Timeout | undefined;
let lastForwardedAt = 0;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    // One signal per press: the first asks the host to cancel and drain, a second stops the drain.
    // A runner in between (npm, tsx) may relay the terminal's one Ctrl-C a second time: a repeat
    // within REPEAT_MS is that echo, not a second press.
    const now = Date.now();
    if (now - lastForwardedAt < REPEAT_MS) return;
    lastForwardedAt = now;
    if (host.exitCode === null && host.signalCode === null) host.kill(signal);
    stopping ??= setTimeout(() => host.kill("SIGKILL"), STOP_BOUND_MS).unref();
  });
}
host.on("error", (error) => {
  console.error(`npm run demo: could not start the host: ${error.message}`);
  process.exitCode = 1;
});
host.on("exit", (code, signal) => {
  clearTimeout(stopping);
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
