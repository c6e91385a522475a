/**
 * `npm run pack:check`: what `npm pack` would publish, checked against an allow-list. Every file
 * must be the build (dist/), an example model (models/), a guide (docs/*.md) or its chart (docs/*.svg), or one of the
 * package's own documents; no tests, fixtures, transcripts, recipes, benchmarks, scripts or
 * sources ship. Every file package.json points at (exports, main, module, types, bin) must ship.
 * Prints the tarball's size. Run after `npm run build`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string; size: number }[];
}

const ALLOWED = [/^dist\//, /^models\/[^/]+\.json$/, /^docs\/[^/]+\.(md|svg)$/, /^(package\.json|README\.md|LICENSE|CHANGELOG\.md)$/];
const FORBIDDEN = [
  /(^|\/)(test|tests|__tests__|fixtures|transcripts|recipes|bench|scripts|src|coverage|node_modules)\//,
  /\.(test|spec)\.[cm]?[jt]sx?(\.map)?$/,
  /\.jsonl$/,
];
const REQUIRED_DOCUMENTS = ["package.json", "README.md", "LICENSE", "CHANGELOG.md"];

const [pack] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as PackResult[];
if (!pack) throw new Error("pack:check: npm pack --dry-run --json printed no package");
const shipped = new Set(pack.files.map((f) => f.path));
const problems: string[] = [];

for (const path of shipped) {
  if (FORBIDDEN.some((re) => re.test(path))) problems.push(`${path} ships, but tests, fixtures and sources must not`);
  else if (!ALLOWED.some((re) => re.test(path))) problems.push(`${path} ships but is not on the allow-list in scripts/pack-check.ts`);
}

const manifest = JSON.parse(readFileSync("package.json", "utf8")) as Record<string, unknown>;
for (const target of new Set([...REQUIRED_DOCUMENTS, ...manifestTargets(manifest)])) {
  const hint = target.startsWith("dist/") ? " (run `npm run build` first)" : "";
  if (!shipped.has(target)) problems.push(`${target} is named by package.json (or required) but does not ship${hint}`);
}

if (problems.length > 0) {
  for (const p of problems) console.error(`pack:check: ${p}`);
  console.error(`pack:check: ${problems.length} problem(s)`);
  process.exit(1);
}
const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
console.log(`pack:check: ok, ${pack.filename}: ${pack.entryCount} files, ${kB(pack.size)} packed, ${kB(pack.unpackedSize)} unpacked`);

/** Every file path package.json points at: main, module, types, bin and each export condition. */
function manifestTargets(pkg: Record<string, unknown>): string[] {
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === "string") found.push(value.replace(/^\.\//, ""));
    else if (value && typeof value === "object") for (const v of Object.values(value)) visit(v);
  };
  for (const key of ["main", "module", "types", "bin", "exports"]) visit(pkg[key]);
  return found;
}
