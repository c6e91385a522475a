/**
 * api:check / api:update: one API Extractor report per public entry point, committed under its
 * package's etc/ (etc/ for @muse-code/sdk, packages/host/etc/ for @muse-code/host).
 *
 * Reads the .d.ts files that `npm run build` (tsup) emits and drives API Extractor through its Node
 * API, with configs built in memory from the table in scripts/entry-points.ts: adding an entry point is one row.
 * Only API reports are produced: no .d.ts rollup, no doc model, no tsdoc-metadata.json. The TSDoc
 * dialect (our `@unit` block tag) is in etc/tsdoc.json, not at the root, where typedoc would read it
 * and replace the tags typedoc.json defines.
 *
 *   npm run api:check    build if dist/ is missing or older than src/, then fail with the diff if a report is stale
 *   npm run api:update   build if dist/ is missing or older than src/, then rewrite the reports
 *
 * `ae-forgotten-export` is an error: a type that the public API mentions must be importable by
 * users. A type that another entry point of this package exports is importable, but API Extractor
 * sees one entry point at a time (tsup's declarations import shared types from chunk files), so the
 * script resolves each such reference with the TypeScript checker and lets it pass.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage, type IConfigFile } from "@microsoft/api-extractor";
import type { TSDocConfigFile as TSDocConfigFileClass } from "@microsoft/tsdoc-config";
import ts from "typescript";
import { ENTRY_POINTS, packageDirOf, packageSpecifier, type EntryPoint } from "./entry-points.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// The copy of @microsoft/tsdoc-config that API Extractor itself depends on (not a dependency of ours).
const apiExtractorRequire = createRequire(createRequire(import.meta.url).resolve("@microsoft/api-extractor"));
const { TSDocConfigFile } = apiExtractorRequire("@microsoft/tsdoc-config") as { TSDocConfigFile: typeof TSDocConfigFileClass };
const ourTypeScript = join(root, "node_modules/typescript");

function configFor(entry: EntryPoint, reportTempFolder: string): IConfigFile {
  return {
    projectFolder: root,
    mainEntryPointFilePath: join(root, entry.dts),
    compiler: {
      // Only declarations are read, so the options just need to resolve them as the build does.
      overrideTsconfig: {
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "DOM"], types: ["node"], strict: true },
        files: [join(root, entry.dts)],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: entry.report,
      reportFolder: join(root, packageDirOf(entry), "etc"),
      reportTempFolder,
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: "lf",
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning },
        "ae-forgotten-export": { logLevel: ExtractorLogLevel.Error, addToApiReportFile: false },
        // There are no release tags in this package: everything an entry point exports is public.
        "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
        // tsdoc:check requires TSDoc on every export; members are marked "(undocumented)" in the report.
        "ae-undocumented": { logLevel: ExtractorLogLevel.None },
        // typedoc (docs:api, invalidLink validation) checks {@link} across all entry points with the rules the
        // rendered docs follow; API Extractor sees one entry point at a time and wants TSDoc member selectors.
        "ae-unresolved-link": { logLevel: ExtractorLogLevel.None },
      },
      tsdocMessageReporting: {
        // TSDoc syntax findings are written into the report (visible in review) rather than failing the check.
        default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
        // typedoc renders these comments as Markdown, where a bare ">" (as in "name -> path") is just text.
        "tsdoc-escape-greater-than": { logLevel: ExtractorLogLevel.None },
      },
    },
  };
}

/** For each entry point that exists: the declarations (resolved through aliases) it exports, by import specifier. */
function exportsByEntry(entries: readonly EntryPoint[]): { checker: ts.TypeChecker; program: ts.Program; exported: Map<ts.Symbol, string[]> } {
  const program = ts.createProgram({
    rootNames: entries.map((e) => join(root, e.dts)),
    options: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ["node"],
      noEmit: true,
    },
  });
  const checker = program.getTypeChecker();
  const exported = new Map<ts.Symbol, string[]>();
  for (const entry of entries) {
    const file = program.getSourceFile(join(root, entry.dts));
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    if (!moduleSymbol) continue;
    for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      exported.set(target, [...(exported.get(target) ?? []), packageSpecifier(entry)]);
    }
  }
  return { checker, program, exported };
}

/** The outermost node that starts at the 1-based line and column. */
function nodeAt(file: ts.SourceFile, line: number, column: number): ts.Node | undefined {
  const pos = file.getPositionOfLineAndCharacter(line - 1, column - 1);
  let node: ts.Node = file;
  for (;;) {
    const child: ts.Node | undefined = node.getChildren(file).find((c) => c.getStart(file) <= pos && pos < c.getEnd());
    if (child === undefined) return undefined;
    if (child.getStart(file) === pos) return child;
    node = child;
  }
}

/**
 * The entry points (other than `entry`) that export the symbol named `name` which the declaration at
 * the message's location refers to; empty when no entry point exports it.
 */
function exportedElsewhere(index: ReturnType<typeof exportsByEntry>, entry: EntryPoint, message: ExtractorMessage, name: string): string[] {
  if (message.sourceFilePath === undefined || message.sourceFileLine === undefined || message.sourceFileColumn === undefined) return [];
  const file = index.program.getSourceFile(resolve(root, message.sourceFilePath));
  const declaration = file && nodeAt(file, message.sourceFileLine, message.sourceFileColumn);
  if (!file || !declaration) return [];
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) {
      let symbol = index.checker.getSymbolAtLocation(node);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = index.checker.getAliasedSymbol(symbol);
      if (symbol && symbol.getName() === name)
        for (const specifier of index.exported.get(symbol) ?? []) if (specifier !== packageSpecifier(entry)) found.add(specifier);
    }
    for (const child of node.getChildren(file)) visit(child);
  };
  visit(declaration);
  return [...found];
}

/** Outcome of one run over every entry point. */
export interface ApiReportRun {
  ok: boolean;
  /** `specifier: Name` for each type the public API uses that no entry point exports. */
  forgottenExports: string[];
}

/** Runs API Extractor for every built entry point; `update` rewrites the reports instead of comparing them. */
export function runApiReports(options: { update: boolean; entries?: readonly EntryPoint[] }): ApiReportRun {
  const entries = (options.entries ?? ENTRY_POINTS).filter((entry) => {
    if (existsSync(join(root, entry.src))) return true;
    console.log(`api: ${packageSpecifier(entry)}: skipped, ${entry.src} does not exist on this branch yet`);
    return false;
  });
  const unbuilt = entries.filter((entry) => !existsSync(join(root, entry.dts)));
  if (unbuilt.length > 0) {
    for (const entry of unbuilt) console.error(`api: ${packageSpecifier(entry)}: the build emits no ${entry.dts}; add ${entry.src} to tsup.config.ts`);
    return { ok: false, forgottenExports: [] };
  }
  let index: ReturnType<typeof exportsByEntry> | undefined;
  const temp = mkdtempSync(join(tmpdir(), "api-report-"));
  const forgottenExports: string[] = [];
  let ok = true;
  let compilerState: CompilerState | undefined;
  let preambleShown = false;
  const tsdocConfigFile = TSDocConfigFile.loadFile(join(root, "etc/tsdoc.json"));
  if (tsdocConfigFile.hasErrors) throw new Error(`etc/tsdoc.json: ${tsdocConfigFile.getErrorSummary()}`);
  try {
    for (const entry of entries) {
      const config = ExtractorConfig.prepare({
        configObject: configFor(entry, temp),
        configObjectFullPath: undefined,
        packageJsonFullPath: join(root, packageDirOf(entry), "package.json"),
        tsdocConfigFile,
      });
      // One TypeScript program serves every entry point.
      compilerState ??= CompilerState.create(config, { additionalEntryPoints: entries.map((e) => join(root, e.dts)), typescriptCompilerFolder: ourTypeScript });
      const report = relative(root, join(root, packageDirOf(entry), "etc", `${entry.report}.api.md`));
      const result = Extractor.invoke(config, {
        compilerState,
        localBuild: options.update,
        printApiReportDiff: true,
        typescriptCompilerFolder: ourTypeScript,
        messageCallback: (message: ExtractorMessage) => {
          if (message.messageId === "console-preamble") {
            // "Analysis will use the bundled TypeScript version …": once, not once per entry point.
            if (!preambleShown) console.log(`api: API Extractor ${Extractor.version}. ${message.text}`);
            preambleShown = true;
            message.logLevel = ExtractorLogLevel.None;
          } else if (["console-api-report-not-copied", "console-api-report-copied", "console-api-report-created"].includes(message.messageId)) {
            // "Please copy the file … or perform a local build": the line after the run says it in this repo's terms.
            message.handled = true;
          } else if (message.messageId === "ae-forgotten-export") {
            const name = /The symbol "([^"]+)"/.exec(message.text)?.[1] ?? "?";
            index ??= exportsByEntry(entries);
            const elsewhere = exportedElsewhere(index, entry, message, name);
            if (elsewhere.length > 0) {
              message.logLevel = ExtractorLogLevel.None;
            } else {
              forgottenExports.push(`${packageSpecifier(entry)}: ${name}`);
              message.handled = true;
              const where = `${relative(root, resolve(root, message.sourceFilePath ?? entry.dts))}:${message.sourceFileLine ?? 0}:${message.sourceFileColumn ?? 0}`;
              console.error(`api: ${where} - ${packageSpecifier(entry)} uses "${name}", which no entry point exports (ae-forgotten-export)`);
            }
          }
        },
      });
      if (result.succeeded) {
        console.log(`api: ${packageSpecifier(entry)}: ${options.update && result.apiReportChanged ? "updated" : "up to date"}, ${report}`);
      } else {
        ok = false;
        const state = existsSync(join(root, report)) ? "is out of date" : "is missing";
        const stale = result.apiReportChanged ? `; ${report} ${state}: run npm run api:update and commit it` : "";
        console.error(`api: ${packageSpecifier(entry)}: ${result.errorCount} error(s), ${result.warningCount} warning(s)${stale}`);
      }
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return { ok, forgottenExports };
}

/** Newest modification time of a file under `dir` (or of `dir` itself when it is a file); 0 when absent. */
function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** Whether a package's dist/ lacks a declaration of an entry point, or is older than the sources or the build configs. */
function buildNeeded(): boolean {
  const built = ENTRY_POINTS.filter((entry) => existsSync(join(root, entry.src))).map((entry) => join(root, entry.dts));
  if (built.some((dts) => !existsSync(dts))) return true;
  const oldest = Math.min(...built.map((dts) => statSync(dts).mtimeMs));
  const inputs = [
    "src",
    "tsup.config.ts",
    "package.json",
    "packages/protocol/src",
    "packages/host/src",
    "packages/host/tsup.config.ts",
    "packages/host/package.json",
  ];
  return Math.max(...inputs.map((input) => newestMtime(join(root, input)))) > oldest;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const update = process.argv.includes("--update");
  if (buildNeeded()) {
    console.log("api: dist/ is missing or older than src/, running npm run build");
    execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
  }
  const run = runApiReports({ update });
  if (run.forgottenExports.length > 0) console.error(`api: ${run.forgottenExports.length} forgotten export(s): ${run.forgottenExports.join(", ")}`);
  process.exit(run.ok ? 0 : 1);
}
