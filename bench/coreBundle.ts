/**
 * The browser core's bundle, built the one way every size figure uses: esbuild bundles
 * src/index.ts for the browser, minified, and gzip level 9 measures it. The budget test, the
 * bench's row (e) and the bundle probe all build it here, so their figures agree.
 */
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";

const entry = fileURLToPath(new URL("../src/index.ts", import.meta.url));

/** The core bundle: its code, esbuild's metafile, and its minified and gzipped sizes in bytes. */
export async function buildCoreBundle(external: string[] = []): Promise<{ code: Uint8Array; metafile: Metafile; minBytes: number; gzipBytes: number }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: "browser",
    format: "esm",
    write: false,
    metafile: true,
    external,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { code, metafile: result.metafile, minBytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length };
}
