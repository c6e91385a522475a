/**
 * docs:check's command lines: every `muse …` and `muse-host …` command a guide tells the reader to
 * type (a line of a fenced `sh`, `bash` or `shell` block, or an inline `npx muse …` span in the
 * prose) goes through the CLI's own argument parser, so a flag that does not exist, a flag that
 * needs another, or a missing required one fails docs:check. A `--spawn "…"` command inside is
 * parsed the same way, and a path into an installed package (`node_modules/@muse-code/sdk/…` or
 * `node_modules/@muse-code/host/…`) must name a file that package's packed tarball holds. `console` blocks are transcripts (a command and what
 * it printed, failures included) and are left to the tests that run them.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { isLoopbackAddress } from "../packages/host/src/transport/webSocketAccess.js";
import { parseServeArgs } from "../packages/host/src/serve/serveArgs.js";
import { parseMuseArgs } from "../packages/host/src/cli/args.js";
import { isServeCommand } from "../packages/host/src/cli/serveCommand.js";

/** One command line of a guide: where it starts, and its text with `\` continuations joined. */
export interface DocCommandLine {
  /** 1-based line of the guide where the command starts. */
  line: number;
  text: string;
}

/** The info strings of the blocks whose lines a reader types into a shell. */
const SHELL_BLOCK = /^(sh|bash|shell|zsh)$/;

/** An inline span that is a whole command: it starts with `npx muse` (a fragment such as `muse-host serve --ws` has no `npx`). */
const INLINE_COMMAND = /`(npx muse(?:-host)? [^`]*)`/g;

/**
 * The command lines of a guide: every line of its shell blocks (comments and blank lines left out,
 * continuation lines joined), and every inline `npx muse …` span outside code blocks. A span that
 * elides its arguments (`npx muse-host …`) is not a command and is left out.
 *
 * @example
 * ```ts
 * const commands = docCommandLines(readFileSync("docs/websocket-host.md", "utf8").split("\n"), blocks);
 * ```
 */
export function docCommandLines(lines: readonly string[], blocks: readonly { line: number; lang: string; start: number; end: number }[]): DocCommandLine[] {
  const commands: DocCommandLine[] = [];
  const inBlock = new Set<number>();
  for (const block of blocks) {
    for (let i = block.line - 1; i <= block.end; i += 1) inBlock.add(i);
    if (!SHELL_BLOCK.test(block.lang)) continue;
    let pending: DocCommandLine | undefined;
    for (let i = block.start; i < block.end; i += 1) {
      const raw = lines[i] as string;
      if (pending === undefined && (raw.trim() === "" || raw.trimStart().startsWith("#"))) continue;
      const continued = /\\$/.test(raw);
      const part = continued ? raw.slice(0, -1) : raw;
      pending = pending === undefined ? { line: i + 1, text: part } : { line: pending.line, text: `${pending.text} ${part.trim()}` };
      if (!continued) {
        commands.push(pending);
        pending = undefined;
      }
    }
    if (pending !== undefined) commands.push(pending);
  }
  lines.forEach((line, i) => {
    if (inBlock.has(i)) return;
    for (const match of line.matchAll(INLINE_COMMAND)) {
      const text = match[1] as string;
      if (!text.includes("…")) commands.push({ line: i + 1, text });
    }
  });
  return commands.sort((a, b) => a.line - b.line);
}

/**
 * The simple commands of a shell line, each as its words: split at `&&`, `||`, `;`, `|`, `&` and
 * parentheses; quotes and backslashes as a POSIX shell reads them; `$(…)` kept whole as one word;
 * redirections (`> file`, `2>&1`) dropped with their target. Throws an `Error` on an unterminated
 * quote or `$(`.
 *
 * @example
 * ```ts
 * simpleCommands(`cd app && npx muse info --ws "ws://127.0.0.1:8080/msp" > info.txt`);
 * // [["cd", "app"], ["npx", "muse", "info", "--ws", "ws://127.0.0.1:8080/msp"]]
 * ```
 */
export function simpleCommands(text: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = "";
  let inWord = false;
  let redirect = false;
  const endWord = () => {
    if (inWord) {
      if (redirect) redirect = false;
      else words.push(word);
    }
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] as string;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error("unterminated ' quote");
      word += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j += 1) {
        if (text[j] === "\\" && j + 1 < text.length && '"\\$`'.includes(text[j + 1] as string)) j += 1;
        word += text[j];
      }
      if (j >= text.length) throw new Error('unterminated " quote');
      inWord = true;
      i = j;
    } else if (c === "\\" && i + 1 < text.length) {
      word += text[i + 1];
      inWord = true;
      i += 1;
    } else if (c === "$" && text[i + 1] === "(") {
      let depth = 0;
      let j = i + 1;
      for (; j < text.length; j += 1) {
        if (text[j] === "(") depth += 1;
        else if (text[j] === ")" && --depth === 0) break;
      }
      if (j >= text.length) throw new Error("unterminated $(");
      word += text.slice(i, j + 1);
      inWord = true;
      i = j;
    } else if (/\s/.test(c)) {
      endWord();
    } else if (c === ";" || c === "|" || c === "&" || c === "(" || c === ")") {
      endCommand();
    } else if (c === ">" || c === "<") {
      // A redirection: a descriptor before it (2>) is no word, and neither is its target.
      if (/^\d+$/.test(word) && inWord) {
        word = "";
        inWord = false;
      } else endWord();
      if (text[i + 1] === ">") i += 1;
      if (text[i + 1] === "&") {
        i += 1; // >&1: the target is a descriptor
        while (/\d/.test(text[i + 1] ?? "")) i += 1;
      } else redirect = true;
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

/**
 * What a guide's `muse` or `muse-host` command is: the bin and its arguments (after `npx` and
 * `VAR=value` words), or undefined for any other command.
 *
 * @example
 * ```ts
 * museInvocation(["npx", "muse-host", "--help"]); // { bin: "muse-host", args: ["--help"] }
 * ```
 */
export function museInvocation(words: readonly string[]): { bin: "muse" | "muse-host"; args: string[] } | undefined {
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string)) i += 1;
  if (words[i] === "npx") i += 1;
  const bin = words[i];
  return bin === "muse" || bin === "muse-host" ? { bin, args: words.slice(i + 1) } : undefined;
}

/** The files of the packed tarball, as package.json "files" names them: `dir`, `file` or `dir/*.ext`. */
function packed(root: string): (path: string) => boolean {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files?: string[] };
  const patterns = (manifest.files ?? []).map((entry) => new RegExp(`^${entry.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}(/|$)`));
  return (path) => path === "package.json" || patterns.some((pattern) => pattern.test(path));
}

/** Why the host's command line (`muse-host ARGS`, or `muse serve …` handed over) would refuse ARGS, as its parser says; undefined when it would not. */
function hostProblem(args: readonly string[]): string | undefined {
  const [command, ...rest] = args;
  if (command === "--version" || command === "--help" || command === "-h") return undefined;
  if (command !== "serve") return command === undefined ? "missing command (serve …)" : `unknown command ${command} (serve …)`;
  if (rest.includes("--help") || rest.includes("-h")) return undefined;
  try {
    const options = parseServeArgs(rest);
    if (options.ws !== undefined && !isLoopbackAddress(options.ws.address) && !options.allowRemote)
      return `--ws ${options.ws.address} is not a loopback address: the host exits 2 without --allow-remote`;
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Why a `muse` or `muse-host` command line would be refused by its parser (the first problem), or
 * undefined when it parses. `muse serve …` goes to the host's command line, as the `muse` bin
 * hands it over; a `--spawn` command of `muse` is checked the same way.
 *
 * @example
 * ```ts
 * commandProblem("muse-host", ["serve", "--ws", "8080"]); // "serve needs --script PATH or --model NAME=PATH"
 * ```
 */
export function commandProblem(bin: "muse" | "muse-host", args: readonly string[]): string | undefined {
  // `muse serve …` is handed to the host's command line before muse parses anything, as the bin does.
  if (bin === "muse" && isServeCommand(args)) return hostProblem(args[0] === "help" ? ["serve", "--help"] : args);
  if (bin === "muse-host") return hostProblem(args);
  let parsed: ReturnType<typeof parseMuseArgs>;
  try {
    parsed = parseMuseArgs(args);
  } catch (error) {
    return (error as Error).message;
  }
  if (parsed.kind !== "command" || parsed.target.kind !== "spawn") return undefined;
  const inner = museInvocation([parsed.target.command, ...parsed.target.args]);
  if (inner === undefined) return undefined;
  const problem = commandProblem(inner.bin, inner.args);
  return problem === undefined ? undefined : `its --spawn command: ${problem}`;
}

/** A path into an installed package, anywhere in a word: `node_modules/@muse-code/host/models/hello.json`. */
const PACKAGE_PATH = /node_modules\/@muse-code\/(sdk|host)\/([^\s"'=,;)]+)/g;

/** Each package a guide may point into, by its name's last part: its folder in the repository. */
const PACKAGE_DIRS: Record<string, string> = { sdk: ".", host: "packages/host" };

/**
 * The problems of a guide's command lines, each `name:line: what`: a shell line that does not
 * split, a `muse`/`muse-host` command its parser refuses, and a path into an installed package
 * that its packed tarball does not hold (`root` is the repository: each package's package.json
 * "files" and the files themselves; a path under `dist/` needs the build).
 *
 * @example
 * ```ts
 * const problems = commandProblems("docs/websocket-host.md", lines, blocks, ".");
 * ```
 */
export function commandProblems(
  name: string,
  lines: readonly string[],
  blocks: readonly { line: number; lang: string; start: number; end: number }[],
  root: string,
): string[] {
  const problems: string[] = [];
  const inTarball = Object.fromEntries(Object.entries(PACKAGE_DIRS).map(([name, dir]) => [name, packed(join(root, dir))]));
  for (const { line, text } of docCommandLines(lines, blocks)) {
    let commands: string[][];
    try {
      commands = simpleCommands(text);
    } catch (error) {
      problems.push(`${name}:${line}: this shell line does not split (${(error as Error).message}): ${text}`);
      continue;
    }
    for (const words of commands) {
      const invocation = museInvocation(words);
      if (invocation === undefined) continue;
      const typed = `${invocation.bin} ${invocation.args.join(" ")}`;
      const problem = commandProblem(invocation.bin, invocation.args);
      if (problem !== undefined) problems.push(`${name}:${line}: \`${typed}\` is refused by its parser: ${problem}`);
      // A --spawn value holds a whole command: its paths are matched inside it too.
      for (const match of invocation.args.join(" ").matchAll(PACKAGE_PATH)) {
        const pkg = match[1] as string;
        const path = (match[2] as string).replace(/\/$/, "");
        const dir = join(root, PACKAGE_DIRS[pkg] as string);
        const where = relative(dir, resolve(dir, path));
        const shown = `node_modules/@muse-code/${pkg}/${path}`;
        if (!inTarball[pkg]?.(where)) problems.push(`${name}:${line}: ${shown} is not in the packed package (package.json "files")`);
        else if (!existsSync(join(dir, where)))
          problems.push(`${name}:${line}: ${shown} does not exist${where.startsWith("dist") ? " (run `npm run build` first?)" : ""}`);
      }
    }
  }
  return problems;
}
