/**
 * The recipe contract: each cookbook recipe is one file exporting a `recipe`, run by
 * recipes/run.ts against the canned host (and, where it has one, a live reference host).
 */
import type { MspClient } from "@muse-code/sdk";

/** Which host a recipe is running against. */
export type RecipeMode = "canned" | "live";

/** What the runner hands a recipe. */
export interface RecipeEnv {
  mode: RecipeMode;
  /** Connect a client: to the canned host replaying the recipe's transcript, or to a live host. */
  connect(): Promise<MspClient>;
  /** A session to work in: the transcript's own in canned mode, a new one in live mode. */
  session(msp: MspClient): Promise<string>;
  /** Resolve once the turn is visibly mid-work (a tool call running). Immediate in canned mode. */
  midWork(msp: MspClient, turnId: string): Promise<void>;
  /**
   * Simulate the host process dying (live: SIGKILL, sent before this returns; canned: the
   * transcript ends the connection after its last line). Resolves once the connection has closed.
   */
  crashHost(msp: MspClient): Promise<void>;
  /** Start the host again after a crash (live: same data dir) and connect to it. */
  restartHost(): Promise<MspClient>;
  /** Print one line under the recipe's name. */
  log(line: string): void;
}

/** One cookbook recipe. */
export interface Recipe {
  name: string;
  /** One line: what it shows. */
  summary: string;
  /** The transcript under transcripts/ that its canned arm replays. */
  transcript: string;
  /**
   * The scripted model its live arm runs against, if it has a live arm: a file under
   * recipes/models/, or `example:NAME` for a model that ships in @muse-code/host (`exampleModelPath`).
   */
  liveModel?: string;
  /**
   * The agent its live arm bridges instead of a scripted model: `muse serve --agent codex` (the
   * pinned Codex binary) or `muse serve --agent acp -- codex-acp` (the pinned codex-acp binary, an
   * ACP agent), its model a scripted Responses-API server on loopback that runs `command` as a
   * shell call and, once its output is back, answers "The command finished.".
   */
  liveAgent?: { agent: "codex" | "acp"; command: string };
  /** More named models for the live host (`--model name=recipes/models/file`, or `example:NAME`); the first is the default. */
  liveModels?: Record<string, string>;
  /**
   * Canned arm: the host of the first transcript hangs up abruptly after its last line, as a
   * crashed host would. Later connections replay `<name>.2.jsonl`, `<name>.3.jsonl`, ….
   */
  cannedCrash?: boolean;
  /** Per-recipe bound. @unit milliseconds @defaultValue 20 000 */
  timeoutMs?: number;
  run(env: RecipeEnv): Promise<void>;
}

/** A prepared environment plus what the runner does after the recipe returns. */
export interface RecipeArm {
  env: RecipeEnv;
  /** Check the host's side: the canned host played its whole transcript. */
  finish(): Promise<void>;
  /** Release processes and files, pass or fail. */
  dispose?(): Promise<void>;
}

/** Whether a recipe has a live arm: a scripted model for the reference host, or a bridged agent. */
export function hasLiveArm(recipe: Recipe): boolean {
  return recipe.liveModel !== undefined || recipe.liveAgent !== undefined;
}
