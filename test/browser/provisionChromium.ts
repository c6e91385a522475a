/**
 * The Chromium the browser tests drive, provisioned by the tests themselves so that
 * `npm ci && npm test` needs nothing but Node and npm. In order:
 * 1. `MSP_TEST_CHROMIUM=/path/to/chrome`, if set, is used and nothing else is tried.
 * 2. The Chromium that the `@sparticuz/chromium` devDependency ships inside its npm tarball
 *    (linux-x64, brotli-compressed, with the NSS libraries it links against). It is inflated once
 *    into a private directory under node_modules/.cache (never the shared /tmp/chromium that the
 *    package defaults to) and must prove it launches.
 * 3. Debian's /usr/bin/chromium, if present; if absent and we are root on a system with apt-get,
 *    it is installed (one progress line).
 * 4. Otherwise one line says what to run. The tests are never skipped.
 * Run from the vitest global setup (test/browser/globalSetup.ts), so it happens once per run; a
 * failure reaches the tests as a {@link ChromiumProblem} and fails them with its one line.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type LaunchOptions } from "playwright-core";

/** A Chromium that launched headless here: what the tests need to launch it again. */
export interface ProvisionedChromium {
  /** Where it came from: the environment override, the npm package, an existing or an apt-installed Debian chromium. */
  source: "MSP_TEST_CHROMIUM" | "@sparticuz/chromium" | "/usr/bin/chromium" | "apt-get";
  executablePath: string;
  /** Extra environment for the browser process (the npm build's bundled libraries and fonts). */
  env: Record<string, string>;
}

/** Why no Chromium could be provisioned: one line saying what to run. */
export interface ChromiumProblem {
  problem: string;
}

const DEBIAN_CHROMIUM = "/usr/bin/chromium";
const cacheRoot = fileURLToPath(new URL("../../node_modules/.cache/muse-sdk-chromium/", import.meta.url));

/**
 * Launch options for a provisioned Chromium: headless (Playwright passes `--headless` and gives
 * every launch a fresh private profile directory, which it deletes on close), and a minimal set
 * of flags for a quiet, offline test browser. Not the package's own `chromium.args`: those are
 * for AWS Lambda (`--single-process`, `--disable-web-security`, …).
 */
export function chromiumLaunchOptions(browser: ProvisionedChromium | ChromiumProblem): LaunchOptions {
  if ("problem" in browser) throw oneLineError(browser.problem);
  return {
    executablePath: browser.executablePath,
    headless: true,
    timeout: 30_000,
    env: { ...process.env, ...browser.env },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  };
}

/** Finds, or makes, a Chromium that launches headless here; throws one line saying what to run otherwise. */
export async function provisionChromium(progress: (line: string) => void = (line) => console.log(line)): Promise<ProvisionedChromium> {
  const override = process.env["MSP_TEST_CHROMIUM"];
  if (override) {
    const browser: ProvisionedChromium = { source: "MSP_TEST_CHROMIUM", executablePath: override, env: {} };
    const problem = await launchProblem(browser);
    if (problem) {
      throw oneLineError(
        `browser tests: MSP_TEST_CHROMIUM=${override} does not launch headless (${problem}); point it at a working Chrome/Chromium or unset it`,
      );
    }
    return browser;
  }
  const tried: string[] = [];
  let npmProblem: string | undefined;
  try {
    const browser = await inflateNpmChromium();
    npmProblem = await launchProblem(browser);
    if (!npmProblem) return browser;
  } catch (error) {
    npmProblem = firstLine(error);
  }
  tried.push(`@sparticuz/chromium: ${npmProblem}`);
  if (existsSync(DEBIAN_CHROMIUM)) {
    const browser: ProvisionedChromium = { source: DEBIAN_CHROMIUM, executablePath: DEBIAN_CHROMIUM, env: {} };
    const problem = await launchProblem(browser);
    if (!problem) return browser;
    tried.push(`${DEBIAN_CHROMIUM}: ${problem}`);
  } else if (process.platform === "linux" && process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    progress(`browser tests: the npm-shipped Chromium did not launch (${npmProblem}); installing Debian's chromium with apt-get…`);
    const browser: ProvisionedChromium = { source: "apt-get", executablePath: DEBIAN_CHROMIUM, env: {} };
    const problem = (await aptGetInstallChromium()) ?? (await launchProblem(browser));
    if (!problem) return browser;
    tried.push(`apt-get install chromium: ${problem}`);
  }
  throw oneLineError(
    `browser tests need a Chromium that launches headless (tried ${tried.join("; ")}): run \`sudo apt-get install -y chromium\` (Debian/Ubuntu), or set MSP_TEST_CHROMIUM=/path/to/chrome`,
  );
}

/** Inflates the package's Chromium once into node_modules/.cache, atomically, and returns it. */
async function inflateNpmChromium(): Promise<ProvisionedChromium> {
  if (process.platform !== "linux" || process.arch !== "x64") throw new Error(`it ships a linux-x64 build; this is ${process.platform}-${process.arch}`);
  const { packageDir, version } = await sparticuzPackage();
  const dir = join(cacheRoot, version);
  if (!existsSync(join(dir, "done"))) {
    await mkdir(cacheRoot, { recursive: true, mode: 0o700 });
    const staging = await mkdtemp(join(cacheRoot, "inflating-"));
    try {
      await inflateInto(staging, join(packageDir, "bin"));
      await writeFile(join(staging, "fonts.conf"), fontconfig(dir));
      await writeFile(join(staging, "done"), `${version}\n`);
      await rename(staging, dir);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      // Another run inflated the same version first: use theirs.
      if (!existsSync(join(dir, "done"))) throw error;
    }
  }
  return {
    source: "@sparticuz/chromium",
    executablePath: join(dir, "chromium"),
    env: { LD_LIBRARY_PATH: libraryPath(join(dir, "al2023", "lib")), FONTCONFIG_FILE: join(dir, "fonts.conf") },
  };
}

/** The installed `@sparticuz/chromium`: its directory (holding `bin/`) and version. */
async function sparticuzPackage(): Promise<{ packageDir: string; version: string }> {
  let dir = dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium"));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(await readFile(manifest, "utf8")) as { name?: string; version: string };
      if (name === "@sparticuz/chromium") return { packageDir: dir, version };
    }
    if (dirname(dir) === dir) throw new Error("cannot find the @sparticuz/chromium package directory");
    dir = dirname(dir);
  }
}

/**
 * The package inflates into `os.tmpdir()` (so /tmp/chromium by default); pointing TMPDIR at a
 * fresh private directory for the duration makes it inflate there instead. This runs in the
 * global setup, before any worker exists, so nothing else reads TMPDIR meanwhile.
 */
async function inflateInto(staging: string, binDir: string): Promise<void> {
  const saved = process.env["TMPDIR"];
  process.env["TMPDIR"] = staging;
  try {
    const { default: sparticuz, inflate } = await import("@sparticuz/chromium");
    const executable = await sparticuz.executablePath(binDir);
    if (executable !== join(staging, "chromium")) throw new Error(`it inflated to ${executable}, not into ${staging}`);
    // The NSS libraries the binary links against, built for Amazon Linux 2023: with them on
    // LD_LIBRARY_PATH the binary needs nothing from the system beyond glibc.
    await inflate(join(binDir, "al2023.tar.br"));
  } finally {
    if (saved === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = saved;
  }
}

/** A fontconfig file with the package's bundled Open Sans plus whatever the system has. */
function fontconfig(dir: string): string {
  return [
    `<?xml version="1.0"?>`,
    `<!DOCTYPE fontconfig SYSTEM "fonts.dtd">`,
    `<fontconfig>`,
    `  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>`,
    `  <dir>${join(dir, "fonts", "fonts")}</dir>`,
    `  <cachedir>${join(dir, "fontconfig-cache")}</cachedir>`,
    `</fontconfig>`,
    ``,
  ].join("\n");
}

function libraryPath(dir: string): string {
  const existing = process.env["LD_LIBRARY_PATH"];
  return existing ? `${dir}:${existing}` : dir;
}

/** Launches the browser and loads a page; returns why that failed, or undefined when it worked. */
async function launchProblem(browser: ProvisionedChromium): Promise<string | undefined> {
  if (!existsSync(browser.executablePath)) return `${browser.executablePath} does not exist`;
  try {
    const launched = await chromium.launch(chromiumLaunchOptions(browser));
    try {
      const page = await launched.newPage();
      await page.setContent("<p>ok</p>");
      if ((await page.textContent("p")) !== "ok") return "it launched but did not render a page";
    } finally {
      await launched.close();
    }
    return undefined;
  } catch (error) {
    return firstLine(error);
  }
}

/** `apt-get update` then `apt-get install chromium`, quietly; returns why it failed, or undefined. */
async function aptGetInstallChromium(): Promise<string | undefined> {
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", "--no-install-recommends", "chromium"],
  ]) {
    const problem = await run("apt-get", args);
    if (problem) return `apt-get ${args[0]}: ${problem}`;
  }
  return undefined;
}

function run(command: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-4_000)));
    child.on("error", (error) => resolve(firstLine(error)));
    child.on("close", (code) => resolve(code === 0 ? undefined : `exit ${code}: ${stderr.trim().split("\n").pop() ?? ""}`));
  });
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split("\n").find((line) => line.trim() !== "") ?? text).trim().slice(0, 300);
}

/** An Error whose stack is its message alone, so the runner prints one line, not a trace into this file. */
function oneLineError(message: string): Error {
  const error = new Error(message);
  error.stack = message;
  return error;
}
