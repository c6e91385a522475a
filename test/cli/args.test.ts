/** The muse command line's parser: every command's options, and a one-line UsageError for each mistake. */
import { describe, expect, it } from "vitest";
import { parseMuseArgs, UsageError } from "../../packages/host/src/cli/args.js";
import { splitCommand } from "../../packages/host/src/cli/splitCommand.js";

const HOST = ["--spawn", "muse-host serve --stdio --script m.json"];

function usage(argv: string[]): string {
  try {
    parseMuseArgs(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`parsed: ${argv.join(" ")}`);
}

describe("parseMuseArgs", () => {
  it("parses run with its options, before or after the command, --flag=value too", () => {
    expect(parseMuseArgs(["--json", "run", "hello there", ...HOST, "--model=big", "--session", "s1", "--keep-inbox", "--record", "r.jsonl"])).toEqual({
      kind: "command",
      command: "run",
      target: { kind: "spawn", command: "muse-host", args: ["serve", "--stdio", "--script", "m.json"], framing: "ndjson" },
      json: true,
      keepInbox: true,
      prompt: "hello there",
      model: "big",
      session: "s1",
      record: "r.jsonl",
    });
    expect(parseMuseArgs(["run", ...HOST, "--", "--not-a-flag"])).toMatchObject({ prompt: "--not-a-flag" });
  });

  it("parses info, resume, --ws with a token file, --framing, help and version", () => {
    expect(parseMuseArgs(["info", "--ws", "ws://127.0.0.1:9/msp", "--token-file", "t"])).toMatchObject({
      command: "info",
      target: { kind: "ws", url: "ws://127.0.0.1:9/msp", tokenFile: "t" },
    });
    expect(parseMuseArgs(["resume", "--session", "s", "--after", "v:s:3", ...HOST, "--framing", "content-length"])).toMatchObject({
      command: "resume",
      session: "s",
      after: "v:s:3",
      target: { framing: "content-length" },
    });
    expect(parseMuseArgs(["info", ...HOST, "--host-stderr"])).toMatchObject({ target: { kind: "spawn", showStderr: true } });
    expect(parseMuseArgs(["--version"])).toEqual({ kind: "version" });
    expect(parseMuseArgs(["--help"])).toEqual({ kind: "help" });
    expect(parseMuseArgs(["run", "--help"])).toEqual({ kind: "help", command: "run" });
    expect(parseMuseArgs(["help", "resume"])).toEqual({ kind: "help", command: "resume" });
  });

  it("says in one line what is wrong", () => {
    expect(usage([])).toBe("missing command");
    expect(usage(["frobnicate"])).toBe('unknown command "frobnicate": the commands are info, run, resume, check, serve');
    expect(usage(["run", ...HOST])).toBe('muse run needs a prompt: muse run "PROMPT" …');
    expect(usage(["run", "a", "b", ...HOST])).toBe('muse run takes one prompt; quote it: muse run "a b"');
    expect(usage(["run", "hi"])).toBe('no host: give --spawn "CMD ARGS…" or --ws URL');
    expect(usage(["info", ...HOST, "--ws", "ws://x/"])).toBe("give one host: --spawn or --ws, not both");
    expect(usage(["info", ...HOST, "--keep-inbox"])).toBe("muse info does not take --keep-inbox");
    expect(usage(["resume", ...HOST])).toBe("muse resume needs --session ID");
    expect(usage(["info", "--ws", "http://x/"])).toBe('--ws needs a ws:// or wss:// URL, got "http://x/"');
    expect(usage(["info", "--ws", "nope"])).toBe('--ws needs a URL such as ws://127.0.0.1:8080/msp, got "nope"');
    expect(usage(["info", "--ws", "ws://x/", "--host-stderr"])).toBe("--host-stderr applies to --spawn only");
    expect(usage(["info", ...HOST, "--framing", "xml"])).toBe('--framing must be ndjson or content-length, got "xml"');
    // A transcript is one message a line whatever the wire's framing: --record takes Content-Length too.
    expect(parseMuseArgs(["run", "hi", ...HOST, "--framing", "content-length", "--record", "f"])).toMatchObject({
      record: "f",
      target: { framing: "content-length" },
    });
    expect(usage(["info", "--spawn", "'unterminated"])).toBe("--spawn: unterminated ' quote");
    expect(usage(["info", "--spawn", "  "])).toBe("--spawn needs a command");
    expect(usage(["info", ...HOST, "--session"])).toBe("--session needs a value");
    expect(usage(["info", ...HOST, "--bogus"])).toBe("unknown option --bogus");
    expect(usage(["info", ...HOST, "--json=yes"])).toBe("--json takes no value");
    expect(usage(["run", "x", ...HOST, "--model", "a", "--model", "b"])).toBe("--model given twice");
    expect(usage(["help", "nope"])).toBe('no help for "nope": the commands are info, run, resume, check, serve');
    expect(usage(["--json", "serve", "--stdio"])).toBe("serve must be the first word: muse serve --stdio … (muse serve --help lists its flags)");
  });
});

describe("splitCommand", () => {
  it("splits words as a shell does, quotes and backslashes only", () => {
    expect(splitCommand(`node  host.js --script "my models/a.json" 'it''s' a\\ b "q\\"x\\\\y\\n"`)).toEqual([
      "node",
      "host.js",
      "--script",
      "my models/a.json",
      "its",
      "a b",
      'q"x\\y\\n',
    ]);
    expect(splitCommand(`sh -c 'echo $HOME && ls'`)).toEqual(["sh", "-c", "echo $HOME && ls"]);
    expect(splitCommand(`""`)).toEqual([""]);
    expect(() => splitCommand(`a "b`)).toThrow('unterminated " quote');
    expect(() => splitCommand(`a \\`)).toThrow("trailing backslash");
  });
});
