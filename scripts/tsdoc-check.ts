/**
 * tsdoc:check: every export of every public entry point carries TSDoc with a summary and an
 * `@example` (house style, point 7).
 *
 * Loads tsconfig.docs.json, walks the exports of each entry point (values and types alike),
 * resolves re-export aliases to the declaration, and reports each gap as
 * `file:line name: missing summary` or `file:line name: missing @example`. Exits 1 on any gap.
 *
 *   npm run tsdoc:check
 */
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const entryPoints = ["src/index.ts", "src/testing/index.ts", "src/node/index.ts", "src/host/index.ts"];

function loadProgram(): ts.Program {
  const configPath = resolve(root, "tsconfig.docs.json");
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath), undefined, configPath);
  return ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
}

function location(decl: ts.Declaration): string {
  const file = decl.getSourceFile();
  const { line } = file.getLineAndCharacterOfPosition(decl.getStart(file));
  return `${relative(root, file.fileName)}:${line + 1}`;
}

const program = loadProgram();
const checker = program.getTypeChecker();
const problems: string[] = [];
let checked = 0;

for (const entry of entryPoints) {
  const file = program.getSourceFile(resolve(root, entry));
  if (!file) {
    problems.push(`${entry}: entry point not in the tsconfig.docs.json program`);
    continue;
  }
  const moduleSymbol = checker.getSymbolAtLocation(file);
  if (!moduleSymbol) {
    problems.push(`${entry}: not a module`);
    continue;
  }
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const decl = symbol.declarations?.[0];
    const where = decl ? location(decl) : entry;
    const name = exported.getName();
    checked += 1;
    // Merges the JSDoc of every declaration (a const and a type of the same name count once).
    const summary = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
    const tags = symbol.getJsDocTags(checker);
    if (summary === "") problems.push(`${where} ${name}: missing summary`);
    if (!tags.some((tag) => tag.name === "example" && ts.displayPartsToString(tag.text).trim() !== "")) {
      problems.push(`${where} ${name}: missing @example`);
    }
  }
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`tsdoc: ${problems.length} gap(s) in ${checked} exports`);
  process.exit(1);
}
console.log(`tsdoc: ${checked} exports, all documented`);
