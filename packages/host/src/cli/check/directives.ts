/** The directed turns the scenarios start: what the msp-check model streams for each (docs/checkable-hosts.md). */
import type { DirectiveStep } from "./scenarioContext.js";

/** A short turn: one message, "Done.", in 8-character chunks. */
export const QUICK: DirectiveStep[] = [{ text: "Done.", chunkSize: 8 }];
/** A model stream of about 4 s: 100 chunks, 40 ms apart. */
export const LONG_STREAM: DirectiveStep[] = [{ reasoning: "Thinking it over.", text: "long answer ".repeat(17), chunkSize: 2, chunkDelayMs: 40 }];
/** A model stream of about 1 s: 35 chunks, 30 ms apart. */
export const MEDIUM_STREAM: DirectiveStep[] = [{ text: "still running ".repeat(5), chunkSize: 2, chunkDelayMs: 30 }];
/** A tool that streams a line every 100 ms for 60 s, then a final message (never reached when cancelled). */
export const LONG_TOOL: DirectiveStep[] = [{ text: "Running the tool.", tool: { runMs: 60_000, outputEveryMs: 100 } }, { text: "The tool finished." }];

/** A step whose tool call asks first, then a step that runs after it (whatever the answer). */
export const ASKING: DirectiveStep[] = [{ text: "Asking first.", tool: { runMs: 300, outputEveryMs: 50, approval: true } }, { text: "The turn went on." }];

/** The long message of {@link STREAMED}: 60 lines, about 4 900 characters, some outside ASCII. */
export const STREAMED_TEXT = Array.from(
  { length: 60 },
  (_, i) => `${String(i + 1).padStart(2, "0")} — streamed as appends: café, naïve, Ωmega; no character is sent twice or lost.\n`,
).join("");
/** A long message in 16-character chunks, then a tool that prints a line every 10 ms for 400 ms, then a last message. */
export const STREAMED: DirectiveStep[] = [
  { reasoning: "A long answer, then a tool.", text: STREAMED_TEXT, chunkSize: 16, tool: { runMs: 400, outputEveryMs: 10 } },
  { text: "Streamed." },
];

/** The reason the hook of {@link HOOK_STOPPED} gives. */
export const HOOK_REASON = "muse check: a policy hook";
/** MSP 2.1: a first step, then a step a named hook stops as it begins, so neither it nor the next one runs. */
export const HOOK_STOPPED: DirectiveStep[] = [
  { text: "Checking the policy." },
  { text: "This step never runs.", stopByHook: HOOK_REASON },
  { text: "Nor does this one." },
];
/** What the first step of {@link USAGE_TOOL} costs, and so the usage of the turn cancelled during its tool. @unit tokens */
export const USAGE_OF_STEP = { inputTokens: 120, outputTokens: 8, reasoningTokens: 3 };
/** MSP 2.1: a step with usage whose tool runs 60 s (cancelled while it runs), then a step with usage that never runs. */
export const USAGE_TOOL: DirectiveStep[] = [
  { text: "Running the tool.", usage: USAGE_OF_STEP, tool: { runMs: 60_000, outputEveryMs: 100 } },
  { text: "The tool finished.", usage: { inputTokens: 200, outputTokens: 5, reasoningTokens: 0 } },
];
/** The tool run a session grant is asked for (and then covers): 200 ms, a line every 50 ms, asked about first. */
export const GRANTED_TOOL = { runMs: 200, outputEveryMs: 50, approval: true } as const;
/** A step whose tool call asks first; its answer is "approve for this session". */
export const GRANTING: DirectiveStep[] = [{ text: "Asking for a grant.", tool: { ...GRANTED_TOOL } }, { text: "The turn went on." }];
/**
 * The same tool call as {@link GRANTING} (the grant covers it), then one with other arguments (a
 * 250 ms run: the grant does not cover it), then a last step.
 */
export const GRANT_COVERS: DirectiveStep[] = [
  { text: "The same call again.", tool: { ...GRANTED_TOOL } },
  { text: "A different call.", tool: { runMs: 250, outputEveryMs: 50, approval: true } },
  { text: "The turn went on." },
];

/** How long each leaf tool of a tree runs when nothing stops it (a stop comes long before). @unit milliseconds */
const TREE_TOOL_MS = 30_000;
/** The text a child that runs a tool writes first: what a stop salvages into its delegating call's output. */
export const WORKER_TEXT = "Worker: partial findings so far.";
/** The text the grandchild writes before its tool runs. */
export const GRANDCHILD_TEXT = "Grandchild: digging deeper.";
/** The text the parent's step after its delegating calls writes (never, when the tree is stopped). */
export const PARENT_WENT_ON = "The parent went on.";
/**
 * A tree: a parent that delegates, at once, to a worker that runs a tool and to a delegator that
 * delegates to a grandchild that runs a tool; each would go on with a last step.
 */
export const TREE: DirectiveStep[] = [
  {
    text: "Delegating to two helpers.",
    delegate: [
      { steps: [{ text: WORKER_TEXT, tool: { runMs: TREE_TOOL_MS, outputEveryMs: 100 } }, { text: "Worker: done." }] },
      {
        steps: [
          {
            text: "Delegator: asking a grandchild.",
            delegate: [{ steps: [{ text: GRANDCHILD_TEXT, tool: { runMs: TREE_TOOL_MS, outputEveryMs: 100 } }, { text: "Grandchild: done." }] }],
          },
          { text: "Delegator: done." },
        ],
      },
    ],
  },
  { text: PARENT_WENT_ON },
];
/** What the failing child of {@link CHILD_FAILS} writes before it fails. */
export const FAILING_CHILD_TEXT = "Child: half of an answer.";
/** Why the failing child's model errs. */
export const CHILD_FAILURE = "muse check: the child's model erred";
/** A parent that delegates to a child that writes a message, then fails; the parent then goes on. */
export const CHILD_FAILS: DirectiveStep[] = [
  { text: "Delegating to a helper that fails.", delegate: [{ steps: [{ text: FAILING_CHILD_TEXT }, { fail: CHILD_FAILURE }, { text: "Child: never." }] }] },
  { text: PARENT_WENT_ON },
];
/** A parent that delegates to a child whose tool call asks first (300 ms, a line every 50 ms); each would go on. */
export const CHILD_ASKS: DirectiveStep[] = [
  {
    text: "Delegating to a helper that asks.",
    delegate: [{ steps: [{ text: "Child: asking first.", tool: { runMs: 300, outputEveryMs: 50, approval: true } }, { text: "Child: went on." }] }],
  },
  { text: PARENT_WENT_ON },
];
