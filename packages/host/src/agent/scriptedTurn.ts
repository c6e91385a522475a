/** The reference host's turn driver: plays a scripted model's turn, step by step, its tool calls through the session's tool runner. */
import { setImmediate as nextTick } from "node:timers/promises";
import type { ScriptedModel, ScriptedToolCall } from "../model/scriptedModel.js";
import { streamModelStep } from "./modelStep.js";
import type { TurnContext, TurnDriver } from "./turnDriver.js";

/** The placeholder a scripted step's text may hold: replaced by the steering its turn has consumed so far. */
const HEARD_PLACEHOLDER = "{{steering}}";

/** What a {@link ScriptedTurns} driver plays with. */
export interface ScriptedTurnsOptions {
  models: ReadonlyMap<string, ScriptedModel>;
  /** Runs one step's tool calls (approvals, grants, the shell, delegation); resolves once every one has ended. */
  dispatch(turn: TurnContext, calls: ScriptedToolCall[]): Promise<void>;
}

/** Plays the turns of scripted models. */
export class ScriptedTurns implements TurnDriver {
  readonly #options: ScriptedTurnsOptions;

  constructor(options: ScriptedTurnsOptions) {
    this.#options = options;
  }

  /** The model's own turn time limit, which wins over the host's. @unit milliseconds */
  turnTimeLimitMs(modelName: string): number | undefined {
    return this.#options.models.get(modelName)?.turnTimeLimitMs;
  }

  async run(turn: TurnContext): Promise<void> {
    const { signal } = turn;
    const model = this.#options.models.get(turn.modelName);
    // The turn's usage: the sum over the steps it ran (a step cut short counts in full), sent only
    // when the model declares usage at all.
    if (model?.declaresUsage === true) turn.declareUsage();
    if (model === undefined) throw new Error(`model ${turn.modelName} is not loaded`);
    const script = turn.child?.script ?? model.turnFor?.(turn.index, turn.input) ?? model.turnAt(turn.index);
    // A directed turn (the msp-check model) declares usage per turn, not per model.
    if (script.steps.some((step) => step.usage !== undefined)) turn.declareUsage();
    await nextTick(); // prompt assembly (the scripted model has none; yield like real I/O would)
    signal.throwIfAborted();
    for (const [s, step] of script.steps.entries()) {
      turn.at("stepBoundary");
      turn.step(s);
      if (step.stopByHook !== undefined) turn.stopByHook(step.stopByHook);
      signal.throwIfAborted();
      if (step.fail !== undefined) throw new Error(step.fail);
      turn.addUsage(step.usage);
      if (step.consumesSteering === true) {
        await turn.whenSteering(step.awaitSteeringMs ?? 0);
        signal.throwIfAborted();
        turn.takeSteering();
      }
      const played = step.text?.includes(HEARD_PLACEHOLDER) === true ? { ...step, text: step.text.replaceAll(HEARD_PLACEHOLDER, turn.heard.join("; ")) } : step;
      turn.at("modelStream");
      const calls = await streamModelStep(turn.turnId, played, signal, { emit: (method, body) => turn.emit(method, body), log: turn.log });
      turn.at("toolExecution");
      await this.#options.dispatch(turn, calls);
    }
  }
}
