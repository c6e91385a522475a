/**
 * Mistakes in your arguments are bugs in the calling code, not failures of the host: they
 * reject (or throw) with TypeError or RangeError, never with MspError, and nothing is sent.
 */
import { MspError } from "@muse-code/sdk";
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

await using msp = spawnReferenceHost({ script: exampleModelPath("hello") });

const mistakes: Record<string, () => Promise<unknown>> = {
  "a negative timeoutMs": () => msp.command("host/info", {}, { timeoutMs: -1 }),
  "a NaN timeoutMs on a wait": () => msp.turns.terminalOf("018f6a1e-9b3c-7c21-a54a-2f30bd3c9f10", { timeoutMs: Number.NaN }),
  // @ts-expect-error TypeScript stops this one at compile time; plain JavaScript gets a TypeError.
  "params that are not an object": () => msp.command("host/info", "verbose"),
  "an empty method name": () => msp.command("", {}),
};

for (const [mistake, call] of Object.entries(mistakes)) {
  try {
    await call();
    console.log(`${mistake}: accepted?!`);
  } catch (error) {
    const name = error instanceof MspError ? "MspError" : error instanceof Error ? error.name : typeof error;
    console.log(`${mistake}: ${name}`);
  }
}

// The connection is unharmed: the host never saw any of them.
const info = await msp.command("host/info", {});
console.log(`still connected to ${info.name}`);
