/** The help texts of `muse`: the synopsis, the whole help, and one page per command. */

/** The synopsis, printed after a bad command line. */
export const USAGE = `usage: muse info   (--spawn "CMD ARGS…" | --ws URL) [--json]
       muse run "PROMPT" (--spawn … | --ws …) [--session ID] [--model NAME] [--keep-inbox]
                         [--approve ask|all|none] [--json] [--record FILE]
       muse resume --session ID [--after CURSOR] (--spawn … | --ws …) [--approve ask|all|none]
                   [--json] [--record FILE]
       muse check  (--spawn … | --ws …) [--model NAME]
       muse serve  (--stdio | --ws [ADDR:]PORT | both) (--script PATH | --agent codex | --agent acp -- CMD ARGS…) …
       muse --help | --version | help COMMAND`;

const CONNECT = `connecting (every command needs exactly one of --spawn and --ws):
  --spawn "CMD ARGS…"    start the host as a child process (its own process group) and speak
                         MSP on its stdin/stdout; CMD ARGS are split like a shell's words
                         (quotes, backslashes), not run by a shell
  --framing F            stdio framing: ndjson (default) or content-length
  --host-stderr          show the spawned host's stderr (its logs) as it writes it; by
                         default muse keeps its last lines to explain a lost connection
  --ws URL               connect to a host's WebSocket (ws://127.0.0.1:PORT/msp); on Node 20
                         it needs the optional package ws (npm install ws)
  --token-file F         the WebSocket host's token, read from F (default: $MUSE_HOST_TOKEN)`;

const OUTPUT = `output:
  --json                 print NDJSON events instead of text (one JSON object a line)
  --color, --no-color    colour and the progress line (default: on when stdout is a terminal
                         and NO_COLOR is unset)
  --record FILE          write the session's wire to FILE as a transcript (JSONL; what
                         checkTranscript checks and CannedHost replays), whatever the framing`;

const APPROVE = `  --approve ask|all|none  when the host asks before running a tool (tool/approve): ask
                         "Run TOOL: COMMAND? [y/N]" and read one key (a line when stdin is not
                         a terminal), approve all, or deny all; default: ask when stdin is a
                         terminal, else none. Ctrl-C at the prompt is Stop. When the host
                         offers them (MSP 2.1), a approves for the session and s denies and
                         stops the turn`;

const EXITS = `exit codes: 0 completed, 130 cancelled, 1 failed (or a refused command), 2 usage,
3 connection lost`;

/** One help page per command (`muse help run`, `muse run --help`). */
export const COMMAND_HELP = {
  info: `usage: muse info (--spawn "CMD ARGS…" | --ws URL) [--json]

Print the host's name, version, protocol version, fingerprint, capabilities and models
(host/info). --json prints the result as one JSON object.

${CONNECT}

${EXITS}`,
  run: `usage: muse run "PROMPT" (--spawn "CMD ARGS…" | --ws URL) [--session ID] [--model NAME]
                [--keep-inbox] [--approve ask|all|none] [--steer-stdin] [--json] [--record FILE]

Start a turn with PROMPT and stream it as it happens: the message text inline, reasoning dimmed,
each tool call with its command, live output and final status, then the turn's terminal.

  --session ID           run in an existing session (resumed on this connection) instead of a
                         new one
  --model NAME           the model: of the new session, or switched to (session/setModel)
  --keep-inbox           Ctrl-C keeps the session's queued turns (turn/cancel keepInbox)
  --steer-stdin          lines read from a piped stdin steer the turn (a terminal's always do)
${APPROVE}

Ctrl-C is Stop: the first sends turn/cancel, prints "stopping…", and waits for the turn's own
terminal, which it prints with its reason (exit 130 when it says cancelled; the turn may also
have finished first). A second Ctrl-C closes the connection at once and kills a spawned host's
process group.

Subagents (a tool call that delegates to a child turn, e.g. the reference host's task) are shown
nested under their tool call: each line of a child turn indented two spaces a level and starting
with the agent's name in brackets, down to its own terminal line. Ctrl-C stops the whole tree with
the one turn/cancel of the top-level turn, and muse exits on that turn's terminal, which comes
after every subagent's.

A line typed while the turn runs steers it (turn/steer, MSP 2.1): it is shown as
">> you (steering): …" and then its fate ("steering: heard", "steering: discarded", "steering:
carried into the next turn"); a refusal prints one "Not steered: …" line. While an approval
question is open, a typed line answers it and never steers. A line half-typed when a question
opens is kept for the next line, never read as an answer. From a pipe, lines steer only with
--steer-stdin (without it they answer questions, as scripts expect).

${CONNECT}

${OUTPUT}

${EXITS}`,
  resume: `usage: muse resume --session ID [--after CURSOR] (--spawn "CMD ARGS…" | --ws URL)
                   [--approve ask|all|none] [--json] [--record FILE]

Replay a session's notifications after CURSOR (all of them without --after), then follow it
while a turn is still running. Exits with that turn's code (or 0 when the session is idle).
Ctrl-C stops the running turn as in \`muse run\`. A host that keeps sessions only while it runs
(muse-host without --data) knows none of a previous process's sessions. A question the host
asks again on resume is answered as --approve says:

${APPROVE}

${CONNECT}

${OUTPUT}

${EXITS}`,
  check: `usage: muse check (--spawn "CMD ARGS…" | --ws URL) [--model NAME] [--no-color]

Run the host conformance scenarios against a host (see docs/checkable-hosts.md) and print a
pass/fail table. Exits 0 when every scenario passes, 1 otherwise.

  --model NAME           the model whose turns play the check's directives (default
                         msp-check); a bridged host's agent model, e.g. codex

${CONNECT}`,
} as const;

/** What `muse --help` prints. */
export const HELP = `${USAGE}

muse is a command-line client for MSP hosts: it runs turns, streams them, and stops them.

commands:
  info                   the host's name, version, protocol, fingerprint and models
  run "PROMPT"           start a turn and stream it; Ctrl-C is Stop
  resume --session ID    replay a session and follow its running turn
  check                  host conformance scenarios, a pass/fail table
  serve                  run the reference host (also muse-host serve); muse serve --help
                         lists its flags
  help COMMAND           that command's help (also: muse COMMAND --help)

${CONNECT}

${OUTPUT}

  --help, -h             print help and exit
  --version              print muse's version and exit

${EXITS}`;
