// lint: the house rules a type checker cannot see.
// 1. The browser-safe core (src/ outside node/, host/, testing/) imports no Node built-in.
// 2. The client never imports host/; host/ imports nothing of ours but protocol/ and the one pure
//    data structure internal/boundedMap.js. The one exception is host/spawnReferenceHost.ts, the
//    client-side launcher of the bundled host, which uses node/spawnHost.js (the host runtime
//    itself never imports it).
// 3. Public entry points use named exports, never `export *`.
// 4. Every source file opens with a header comment.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative, sep } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const problems = [];
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const importRe = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
for (const path of files(join(root, "src"))) {
  const rel = relative(root, path).split(sep).join("/");
  const area = rel.split("/")[1] ?? "";
  const text = readFileSync(path, "utf8");
  if (!/^(#![^\n]*\n)?\s*\/\*\*/.test(text)) problems.push(`${rel}: must open with a /** header comment */ saying what it is for`);
  if (/^export \* /m.test(text)) problems.push(`${rel}: uses "export *"; public surfaces name every export`);
  for (const match of text.matchAll(importRe)) {
    const spec = match[1] ?? match[2];
    const nodeOnly = area === "node" || area === "host" || area === "testing";
    if (builtins.has(spec) && !nodeOnly) problems.push(`${rel}: the browser-safe core imports ${spec}`);
    if (area !== "host" && spec.includes("/host/")) problems.push(`${rel}: client code imports the reference host (${spec})`);
    if (area === "host" && spec.startsWith(".") && spec.startsWith("../") && !spec.startsWith("../protocol/") && spec !== "../internal/boundedMap.js" && !(rel === "src/host/spawnReferenceHost.ts" && spec === "../node/spawnHost.js")) {
      problems.push(`${rel}: host/ may share only protocol/ and internal/boundedMap.js with the client, not ${spec}`);
    }
  }
}

if (problems.length > 0) {
  for (const p of problems) console.error(`lint: ${p}`);
  console.error(`lint: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log("lint: ok");
