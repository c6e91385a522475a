/**
 * `muse serve`: the reference host, run exactly as `muse-host serve` runs it (same flags, same
 * output, same exit codes). The host is loaded from this package's public `@muse-code/host`
 * entry point, and only for this command, so the client commands never load it.
 */

/** Whether `argv` asks for the host: `muse serve …`, or `muse help serve`. */
export function isServeCommand(argv: readonly string[]): boolean {
  return argv[0] === "serve" || (argv[0] === "help" && argv[1] === "serve" && argv.length === 2);
}

/** Run the host's command line for `argv` (see {@link isServeCommand}) and resolve with its exit code. */
export async function serveCommand(argv: readonly string[]): Promise<number> {
  const { runHostCli } = await import("@muse-code/host");
  return await runHostCli(argv[0] === "help" ? ["serve", "--help"] : argv);
}
