/** The directed turns the scenarios start: what the msp-check model streams for each (docs/checkable-hosts.md). */
import type { DirectiveStep } from "./scenarioContext.js";

/** A short turn: one message, "Done.", in 8-character chunks. */
export const QUICK: DirectiveStep[] = [{ text: "Done.", chunkSize: 8 }];
/** A model stream of about 4 s: 100 chunks, 40 ms apart. */
export const LONG_STREAM: DirectiveStep[] = [{ reasoning: "Thinking it over.", text: "long answer ".repeat(17), chunkSize: 2, chunkDelayMs: 40 }];
/** A tool that streams a line every 100 ms for 60 s, then a final message (never reached when cancelled). */
export const LONG_TOOL: DirectiveStep[] = [{ text: "Running the tool.", tool: { runMs: 60_000, outputEveryMs: 100 } }, { text: "The tool finished." }];

/** A step whose tool call asks first, then a step that runs after it (whatever the answer). */
export const ASKING: DirectiveStep[] = [{ text: "Asking first.", tool: { runMs: 300, outputEveryMs: 50, approval: true } }, { text: "The turn went on." }];
