/**
 * tsdoc:check: every export of every public entry point carries TSDoc with a summary and an
 * `@example` (house style, point 7), and every ```ts block inside an `@example` compiles.
 *
 * Loads tsconfig.docs.json, walks the exports of each entry point (values and types alike),
 * resolves re-export aliases to the declaration, and reports each gap as
 * `file:line name: missing summary` or `file:line name: missing @example`.
 *
 * Then it type-checks the examples: of the exports and of their members. Each ```ts block becomes a
 * virtual module that imports every public export of every entry point by its package name
 * (`@muse-code/sdk`, `@muse-code/sdk/node`, `@muse-code/host`, … resolved to their sources through tsconfig paths), declares
 * the PRELUDE below, and wraps the block in an async function so `await` works. An `import` line in
 * a block is hoisted to the module. All modules compile in one program with the repo's options,
 * minus the three that judge whether a fragment is a whole program rather than whether its types are
 * right (noUnusedLocals, noUnusedParameters, noImplicitReturns). A failure reads
 * `src/file.ts:LINE (export Name): TS2339: Property 'code' does not exist on type 'MspError'.`
 *
 * Exits 1 on any problem.
 *
 *   npm run tsdoc:check
 */
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { ENTRY_POINTS, packageSpecifier, type EntryPoint } from "./entry-points.js";

/** What this check needs of an entry point: its package and subpath (hence the name it is imported by) and its source. */
export type SourceEntry = Pick<EntryPoint, "subpath" | "src" | "packageName">;

/**
 * The free names an example may use without declaring them: the objects of the user's app that a
 * snippet is understood to run inside. Anything else an example needs, it declares or imports.
 */
export const PRELUDE = `
declare const client: import("@muse-code/sdk").MspClient; // a connected client: connect(channel)
declare const msp: import("@muse-code/sdk").MspClient; // the same, as some examples call it
declare const channel: import("@muse-code/sdk").ByteChannel; // the transport the client was given
declare const sessionId: string;
declare const turnId: string;
declare const input: import("@muse-code/sdk").TurnInput[]; // a turn's input
declare const turn: import("@muse-code/sdk").TurnHandle; // a turn the app started
declare const params: import("@muse-code/sdk").TurnCompletedParams; // the params of a turn/completed notification
declare const signal: AbortSignal;
declare const e: unknown; // a caught value
declare const error: unknown; // a caught value
declare const socket: import("node:net").Socket; // a connected socket (Node)
declare const child: import("node:child_process").ChildProcessWithoutNullStreams; // a spawned host with piped stdio (Node)
declare const button: HTMLButtonElement; // the app's Stop button (browser)
declare const status: HTMLElement; // the app's status line (browser)
declare const url: string; // the host's WebSocket URL (browser: from the page's address)
declare const token: string; // the host's token
declare const session: import("@muse-code/sdk/session").MspSession; // an open session (openSession)
declare function render(snapshot: import("@muse-code/sdk/session").SessionSnapshot): void; // the app's render of a session
`;

/** Options of {@link checkTsdoc}. */
export interface TsdocCheckOptions {
  /** The repository root (the folder of tsconfig.docs.json). */
  root: string;
  /**
   * The entry points whose exports are checked; every public one on this branch by default. An entry
   * outside ENTRY_POINTS (a test's fixture) is also importable by its package name in the examples.
   */
  entries?: readonly SourceEntry[];
}

/** Outcome of {@link checkTsdoc}. */
export interface TsdocCheck {
  ok: boolean;
  problems: string[];
  /** Exports walked. */
  exports: number;
  /** ```ts blocks compiled. */
  examples: number;
}

/** One ```ts block of an `@example`. */
interface ExampleBlock {
  /** Absolute path of the source file. */
  file: string;
  /** 1-based line, in `file`, of the block's first code line. */
  line: number;
  /** `Name` or `Name.member`. */
  label: string;
  /** The entry point whose export it documents (its names win over same-named exports of others). */
  entry: SourceEntry;
  code: string[];
}

function loadOptions(root: string): { options: ts.CompilerOptions; fileNames: string[] } {
  const configPath = resolve(root, "tsconfig.docs.json");
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath), undefined, configPath);
  return { options: parsed.options, fileNames: parsed.fileNames };
}

/** A compiler host over the real files that also serves `virtual` files, and parses each file once for both programs. */
function compilerHost(options: ts.CompilerOptions, virtual: Map<string, string>): ts.CompilerHost {
  const host = ts.createCompilerHost(options, true);
  const parsed = new Map<string, ts.SourceFile>();
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => virtual.has(resolve(name)) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(resolve(name)) ?? readFile.call(host, name);
  host.getSourceFile = (name, languageVersion, onError, shouldCreate) => {
    const path = resolve(name);
    const text = virtual.get(path);
    if (text !== undefined) return ts.createSourceFile(path, text, languageVersion, true);
    let file = parsed.get(path);
    if (file === undefined) {
      file = getSourceFile.call(host, name, languageVersion, onError, shouldCreate);
      if (file !== undefined) parsed.set(path, file);
    }
    return file;
  };
  return host;
}

function lineOf(file: ts.SourceFile, pos: number): number {
  return file.getLineAndCharacterOfPosition(pos).line + 1;
}

/** The ```ts blocks of one `@example` tag, with their source lines. */
function blocksOfTag(file: ts.SourceFile, tag: ts.JSDocTag): { line: number; code: string[] }[] {
  const first = lineOf(file, tag.pos);
  const raw = file.text.slice(tag.pos, tag.end).split("\n");
  const lines = raw.map((text, i) => (i === 0 ? text : text.replace(/^\s*\*( |$)/, "")).replace(/\s*\*\/\s*$/, ""));
  const blocks: { line: number; code: string[] }[] = [];
  let open: { line: number; code: string[]; ts: boolean } | undefined;
  lines.forEach((text, i) => {
    const fence = /^\s*```\s*([\w-]*)/.exec(text);
    if (fence && open === undefined) open = { line: first + i + 1, code: [], ts: ["ts", "typescript"].includes(fence[1] ?? "") };
    else if (fence && open !== undefined) {
      if (open.ts) blocks.push({ line: open.line, code: open.code });
      open = undefined;
    } else open?.code.push(text);
  });
  return blocks;
}

/** The `@example` blocks in the TSDoc of `declaration` and of everything declared inside it (members). */
function examplesOf(declaration: ts.Declaration, exportName: string, entry: SourceEntry, seen: Set<ts.Node>): ExampleBlock[] {
  const file = declaration.getSourceFile();
  const found: ExampleBlock[] = [];
  const visit = (node: ts.Node, label: string): void => {
    for (const doc of ts.getJSDocCommentsAndTags(node)) {
      if (seen.has(doc)) continue;
      seen.add(doc);
      const tags = ts.isJSDoc(doc) ? (doc.tags ?? []) : [doc];
      for (const tag of tags) {
        if (tag.tagName.text !== "example") continue;
        for (const block of blocksOfTag(file, tag)) found.push({ file: file.fileName, line: block.line, label, entry, code: block.code });
      }
    }
    ts.forEachChild(node, (child) => {
      const name = ts.isClassElement(child) || ts.isTypeElement(child) ? child.name : undefined;
      visit(child, name !== undefined && (ts.isIdentifier(name) || ts.isStringLiteral(name)) ? `${exportName}.${name.text}` : label);
    });
  };
  visit(declaration, exportName);
  return found;
}

/** The names each entry point exports, in the order of `entries`. */
function exportNames(checker: ts.TypeChecker, program: ts.Program, root: string, entries: readonly SourceEntry[]): Map<SourceEntry, string[]> {
  const names = new Map<SourceEntry, string[]>();
  for (const entry of entries) {
    const file = program.getSourceFile(resolve(root, entry.src));
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    if (moduleSymbol)
      names.set(
        entry,
        checker.getExportsOfModule(moduleSymbol).map((s) => s.getName()),
      );
  }
  return names;
}

/** The text of one example module, and for each of its lines the source line it came from (0: generated). */
function exampleModule(block: ExampleBlock, imports: Map<SourceEntry, string[]>): { text: string; origin: number[] } {
  const lines: string[] = [];
  const origin: number[] = [];
  const add = (text: string, from = 0): void => {
    lines.push(text);
    origin.push(from);
  };
  // The block's own imports move to the module; the names they bind are not imported again.
  const hoisted: { text: string; line: number }[] = [];
  const body: { text: string; line: number }[] = [];
  const own = new Set<string>();
  block.code.forEach((text, i) => {
    const line = block.line + i;
    if (/^import\s/.test(text)) {
      hoisted.push({ text, line });
      const clause = ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest).statements[0];
      if (clause && ts.isImportDeclaration(clause) && clause.importClause) {
        const { name, namedBindings } = clause.importClause;
        if (name) own.add(name.text);
        if (namedBindings && ts.isNamespaceImport(namedBindings)) own.add(namedBindings.name.text);
        if (namedBindings && ts.isNamedImports(namedBindings)) for (const e of namedBindings.elements) own.add(e.name.text);
      }
    } else body.push({ text, line });
  });
  // Every public name once: from the documented export's own entry point first, then in table order.
  const order = [...imports.keys()].sort((a, b) => Number(b.src === block.entry.src) - Number(a.src === block.entry.src));
  const taken = new Set(own);
  for (const entry of order) {
    const names = (imports.get(entry) ?? []).filter((name) => !taken.has(name));
    for (const name of names) taken.add(name);
    if (names.length > 0) add(`import { ${names.join(", ")} } from "${packageSpecifier(entry)}";`);
  }
  for (const { text, line } of hoisted) add(text, line);
  for (const text of PRELUDE.trim().split("\n")) add(text);
  add("export async function example() {");
  for (const { text, line } of body) add(text, line);
  add("}");
  return { text: `${lines.join("\n")}\n`, origin };
}

/** Runs the check; the caller prints the problems. */
export function checkTsdoc(options: TsdocCheckOptions): TsdocCheck {
  const { root } = options;
  const entries = (options.entries ?? ENTRY_POINTS).filter((entry) => existsSync(resolve(root, entry.src)));
  const { options: compilerOptions, fileNames } = loadOptions(root);
  // Every entry point resolves by its package name, also one that tsconfig.json does not map yet.
  const paths: ts.MapLike<string[]> = { ...compilerOptions.paths };
  for (const entry of entries) paths[packageSpecifier(entry)] ??= [`./${entry.src}`];
  const virtual = new Map<string, string>();
  const host = compilerHost(compilerOptions, virtual);
  const program = ts.createProgram({ rootNames: [...new Set([...fileNames, ...entries.map((e) => resolve(root, e.src))])], options: compilerOptions, host });
  const checker = program.getTypeChecker();
  const problems: string[] = [];
  const blocks: ExampleBlock[] = [];
  const seenDocs = new Set<ts.Node>();
  const location = (decl: ts.Node): string => `${relative(root, decl.getSourceFile().fileName)}:${lineOf(decl.getSourceFile(), decl.getStart())}`;
  let exports = 0;

  for (const entry of entries) {
    const file = program.getSourceFile(resolve(root, entry.src));
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    if (!moduleSymbol) {
      problems.push(`${entry.src}: not a module of the tsconfig.docs.json program`);
      continue;
    }
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declarations = symbol.declarations ?? [];
      const where = declarations[0] ? location(declarations[0]) : entry.src;
      const name = exported.getName();
      exports += 1;
      // Merges the JSDoc of every declaration (a const and a type of the same name count once).
      const summary = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
      const tags = symbol.getJsDocTags(checker);
      if (summary === "") problems.push(`${where} ${name}: missing summary`);
      if (!tags.some((tag) => tag.name === "example" && ts.displayPartsToString(tag.text).trim() !== "")) problems.push(`${where} ${name}: missing @example`);
      for (const declaration of declarations) blocks.push(...examplesOf(declaration, name, entry, seenDocs));
    }
  }

  // One program compiles every example module.
  const publicEntries = ENTRY_POINTS.filter((e) => existsSync(resolve(root, e.src)));
  const imports = exportNames(checker, program, root, [...publicEntries, ...entries.filter((e) => !publicEntries.some((p) => p.src === e.src))]);
  const modules = new Map<string, { block: ExampleBlock; origin: number[] }>();
  blocks.forEach((block, i) => {
    const path = join(root, ".tsdoc-examples", `${relative(root, block.file).replace(/[/\\.]/g, "_")}_${block.line}_${i}.ts`);
    const { text, origin } = exampleModule(block, imports);
    virtual.set(path, text);
    modules.set(path, { block, origin });
  });
  const exampleOptions: ts.CompilerOptions = {
    ...compilerOptions,
    paths,
    noUnusedLocals: false,
    noUnusedParameters: false,
    noImplicitReturns: false,
    noEmit: true,
  };
  const examples = ts.createProgram({ rootNames: [...modules.keys()], options: exampleOptions, host, oldProgram: program });
  for (const diagnostic of examples.getOptionsDiagnostics())
    problems.push(`tsdoc examples: TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`);
  for (const [path, { block, origin }] of modules) {
    const file = examples.getSourceFile(path);
    if (file === undefined) continue;
    for (const diagnostic of [...examples.getSyntacticDiagnostics(file), ...examples.getSemanticDiagnostics(file)]) {
      const line = diagnostic.start === undefined ? 0 : (origin[lineOf(file, diagnostic.start) - 1] ?? 0);
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, " ").replace(/\s+/g, " ");
      const problem = `${relative(root, block.file)}:${line || block.line} (export ${block.label}): TS${diagnostic.code}: ${text}`;
      if (!problems.includes(problem)) problems.push(problem);
    }
  }
  return { ok: problems.length === 0, problems, exports, examples: modules.size };
}

function main(): number {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  for (const entry of ENTRY_POINTS)
    if (!existsSync(resolve(root, entry.src))) console.log(`tsdoc: ${packageSpecifier(entry)}: skipped, ${entry.src} does not exist on this branch yet`);
  const result = checkTsdoc({ root });
  for (const problem of result.problems) console.error(problem);
  const summary = `${result.exports} exports, ${result.examples} example blocks compiled`;
  if (!result.ok) {
    console.error(`tsdoc: ${result.problems.length} problem(s); ${summary}`);
    return 1;
  }
  console.log(`tsdoc: ${summary}, all documented and compiling`);
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main();
