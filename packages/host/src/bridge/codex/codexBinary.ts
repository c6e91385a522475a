/**
 * Where the Codex agent's native binary is: an explicit path (`--agent-bin PATH`), else the one the
 * pinned `@openai/codex` package carries in its per-platform optional dependency. The binary is
 * spawned directly, never through the package's `bin/codex.js` launcher: on Node versions without
 * `process.execve` the launcher runs the binary as its own child, which would put one more process
 * between the bridge and the agent, and signals sent to the agent would go to the launcher.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The version of `@openai/codex` the bridge is built and tested against (its generated types come from it). */
export const CODEX_VERSION = "0.169.0";

/** The Rust target triple and the npm package of each platform the pinned package ships a binary for. */
const PLATFORM_PACKAGES: Record<string, { triple: string; packageName: string } | undefined> = {
  "linux-x64": { triple: "x86_64-unknown-linux-musl", packageName: "@openai/codex-linux-x64" },
  "linux-arm64": { triple: "aarch64-unknown-linux-musl", packageName: "@openai/codex-linux-arm64" },
  "darwin-x64": { triple: "x86_64-apple-darwin", packageName: "@openai/codex-darwin-x64" },
  "darwin-arm64": { triple: "aarch64-apple-darwin", packageName: "@openai/codex-darwin-arm64" },
  "win32-x64": { triple: "x86_64-pc-windows-msvc", packageName: "@openai/codex-win32-x64" },
  "win32-arm64": { triple: "aarch64-pc-windows-msvc", packageName: "@openai/codex-win32-arm64" },
};

/** The Codex binary cannot be found: neither given nor installed with `@openai/codex` for this platform. */
export class CodexBinaryNotFoundError extends Error {
  override readonly name = "CodexBinaryNotFoundError";
}

/**
 * The path of the Codex binary to run: `explicit` when given (it must exist), else the native binary
 * of the installed `@openai/codex` package for this platform. Throws {@link CodexBinaryNotFoundError}.
 */
export function resolveCodexBinary(explicit?: string): string {
  if (explicit !== undefined) {
    if (!existsSync(explicit)) throw new CodexBinaryNotFoundError(`the Codex binary ${explicit} does not exist`);
    return explicit;
  }
  const platform = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (platform === undefined)
    throw new CodexBinaryNotFoundError(`@openai/codex ships no binary for ${process.platform}-${process.arch}: pass the agent binary's path`);
  let packageJson: string;
  try {
    packageJson = createRequire(import.meta.url).resolve(`${platform.packageName}/package.json`);
  } catch {
    throw new CodexBinaryNotFoundError(
      `${platform.packageName} is not installed (it comes with @openai/codex@${CODEX_VERSION}): install it or pass the agent binary's path`,
    );
  }
  const binary = join(dirname(packageJson), "vendor", platform.triple, "bin", process.platform === "win32" ? "codex.exe" : "codex");
  if (!existsSync(binary)) throw new CodexBinaryNotFoundError(`${platform.packageName} has no binary at ${binary}`);
  return binary;
}
