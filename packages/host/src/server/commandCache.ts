/** The idempotency cache: a repeated commandId gets the identical answer, without re-executing. */
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";
import type { ReplayScan } from "./resumePoint.js";

/** What a command answered: its result or its JSON-RPC error. */
export type CommandOutcome = (
  | {
      kind: "result";
      result: unknown;
      /** A `session/resume`'s replay: the notifications with `after < n <= upTo`, re-sent on every answer. */
      replay?: ReplayRange;
    }
  | {
      kind: "error";
      error: { code: number; message: string; data?: unknown };
      /** An `already_terminal` rejection: that turn's terminal must precede it on every connection. */
      terminalOf?: { sessionId: string; turnId: string };
    }
) & {
  /** The method that produced it; the same commandId with another method is an error. */
  method?: string;
};

/** The range of logged notifications a `session/resume` replays. */
export interface ReplayRange {
  sessionId: string;
  /** @unit cursor sequence, exclusive */
  after: number;
  /** @unit cursor sequence, inclusive */
  upTo: number;
  /** The sessions of its tree replayed with it, each after its own cursor, merged in host order. */
  children?: Array<{ sessionId: string; after: number; upTo: number }>;
  /**
   * Every session below it when the resume was handled (replayed or not): a session linked later
   * (before this answer, or before a retry of it) is replayed whole with the tree.
   */
  tree?: string[];
  /**
   * The plan's one scan of each session's log (by sessionId): the first delivery feeds the replay
   * from these and counts only what was logged since. Taken off the outcome by that delivery, so
   * the cache never holds a log position.
   */
  scans?: Map<string, ReplayScan>;
}

/** Default number of commandIds remembered. */
export const DEFAULT_COMMAND_CACHE_CAPACITY = 10_000;

/** A bounded map from commandId to outcome; the oldest entries are forgotten first. */
export class CommandCache {
  readonly capacity: number;
  readonly #entries: BoundedMap<string, CommandOutcome>;

  constructor(capacity: number = DEFAULT_COMMAND_CACHE_CAPACITY) {
    this.capacity = Math.max(1, capacity);
    this.#entries = new BoundedMap({ capacity: this.capacity, order: "recency" });
  }

  /** The remembered outcome of `commandId`, if any. */
  lookup(commandId: string): CommandOutcome | undefined {
    return this.#entries.get(commandId);
  }

  /** Remembers `outcome` for `commandId`, evicting the oldest entry beyond capacity. */
  remember(commandId: string, outcome: CommandOutcome): void {
    this.#entries.set(commandId, outcome);
  }

  /** How many commandIds are remembered. */
  get size(): number {
    return this.#entries.size;
  }
}
