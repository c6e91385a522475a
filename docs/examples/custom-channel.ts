/**
 * Your own transport: `connect()` takes any ByteChannel (write bytes, end, and report data, end
 * and errors). Here one is written by hand over a child process's stdio, to show the whole
 * contract; a WebSocket or a worker port adapts the same way.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { connect, type ByteChannel } from "@muse-code/sdk";
import { exampleModelPath } from "@muse-code/sdk/node";

// The reference host's command line, located through the installed @muse-code/host (its "muse-host" bin).
const require = createRequire(import.meta.url);
const manifestPath = require.resolve("@muse-code/host/package.json");
const manifest = require(manifestPath) as { bin: Record<string, string> };
const cli = join(dirname(manifestPath), manifest.bin["muse-host"] as string);
const child = spawn(process.execPath, [cli, "serve", "--stdio", "--script", exampleModelPath("hello")], { stdio: ["pipe", "pipe", "inherit"] });

// #region channel
const channel: ByteChannel = {
  onData(listener) {
    child.stdout.on("data", listener);
    return () => child.stdout.off("data", listener);
  },
  onEnd(listener) {
    // "close": the child has exited and its stdout has been read to the end.
    const onClose = (exitCode: number | null, signal: NodeJS.Signals | null) => listener({ exitCode, signal });
    child.on("close", onClose);
    return () => child.off("close", onClose);
  },
  onError(listener) {
    child.stdin.on("error", listener);
    return () => child.stdin.off("error", listener);
  },
  write: (bytes) => new Promise<void>((resolve, reject) => child.stdin.write(bytes, (error) => (error ? reject(error) : resolve()))),
  end: () => child.stdin.end(),
};
const msp = connect(channel, { framing: "ndjson", defaultTimeoutMs: 10_000 });
// #endregion channel

const info = await msp.command("host/info", {});
console.log(`connected to ${info.name} over a hand-made channel`);

// #region close
// close() settles everything pending and ends our side of the channel. The child is yours: it
// exits when its stdin ends, and until it has, Node keeps running.
await msp.close();
const [exitCode] = await once(child, "exit");
console.log(`host exited with code ${exitCode}`);
// #endregion close
