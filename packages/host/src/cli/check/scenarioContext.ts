/**
 * ScenarioContext: what one `muse check` scenario works with: the client, the recorded wire,
 * and the steps every scenario shares (create a checkable session, start a directed turn, wait
 * for a terminal on the wire, expect a rejection). Problems are collected, not thrown, so a
 * scenario reports everything it saw.
 */
import { MspError, uuidv7, type MspClient } from "@muse-code/sdk";
import type { WireLine, WireTap } from "./checkWire.js";
import type { SpawnedProcess } from "./spawnedProcess.js";

/** The model name `muse check` creates its sessions with (docs/checkable-hosts.md). */
export const CHECK_MODEL = "msp-check";

/**
 * One step of a directive: what a turn of the msp-check model streams (docs/checkable-hosts.md).
 * `chunkSize` is in characters, `chunkDelayMs`, `tool.runMs` and `tool.outputEveryMs` in milliseconds.
 */
export interface DirectiveStep {
  reasoning?: string;
  text?: string;
  chunkSize?: number;
  chunkDelayMs?: number;
  tool?: { runMs: number; outputEveryMs?: number; approval?: boolean };
  /** MSP 2.1: what the step costs, summed into the turn's `usage`. @unit tokens */
  usage?: { inputTokens?: number; outputTokens?: number; reasoningTokens?: number };
  /** MSP 2.1: a named hook stops the turn as this step begins (`cause: {kind: "hook", reason}`). */
  stopByHook?: string;
  /** After the tool call, one delegating tool call per directive, run at once, each a child turn (in a child session) that plays it. */
  delegate?: Array<{ steps: DirectiveStep[] }>;
  /** The turn fails as this step begins, as a model that errs mid-turn fails it: terminal `failed`, its reason naming this text. */
  fail?: string;
}

/** A problem a scenario found, with the (1-based) wire lines that show it. */
export interface Problem {
  text: string;
  lines: number[];
}

/**
 * A turn a scenario started: its turnId, the `commandId` of its `turn/start`, its disposition,
 * and the wire line of the ack.
 */
export interface StartedTurn {
  turnId: string;
  commandId: string;
  disposition: unknown;
  ackLine: number | undefined;
}

/** The prompt of a directed turn. */
function directive(steps: DirectiveStep[]): Array<{ type: "text"; text: string }> {
  return [{ type: "text", text: JSON.stringify({ steps }) }];
}

/** Sleep `ms` milliseconds. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The shared steps of a scenario; see the module comment. `doing` names the step in progress,
 * so a timeout can say what the host never sent.
 */
export class ScenarioContext {
  /** The client on the scenario's connection (another after {@link ScenarioContext.reconnect}). */
  client: MspClient;
  readonly wire: WireTap;
  readonly problems: Problem[] = [];
  /** The host's process, when the check spawned it (see `CheckedHost.spawned`). */
  spawned: SpawnedProcess | undefined;
  /** Opens another connection the way the scenario's first was opened, recorded on the same wire (runCheck sets it). */
  reopen: (() => Promise<{ client: MspClient; spawned?: SpawnedProcess }>) | undefined;
  /** Set by {@link ScenarioContext.reconnect}: the number of wire lines recorded before the second connection opened. */
  reconnectedAfter: number | undefined;
  /** Set when the scenario shut the host down: the number of wire lines recorded before it signalled the host. */
  shutdownAfter: number | undefined;
  /** What the scenario is doing now: a timeout names it. */
  doing = "starting";
  /** Set by {@link ScenarioContext.notRun}: why the host could not be checked for this scenario. */
  notRunReason: string | undefined;
  /** The model the scenario's sessions are created with: {@link CHECK_MODEL} unless `muse check --model` names another. */
  readonly model: string;

  constructor(client: MspClient, wire: WireTap, spawned?: SpawnedProcess, model: string = CHECK_MODEL) {
    this.client = client;
    this.wire = wire;
    this.spawned = spawned;
    this.model = model;
  }

  /** Record a problem. */
  fail(text: string, lines: Array<number | undefined> = []): void {
    this.problems.push({ text, lines: lines.filter((l): l is number => l !== undefined) });
  }

  /** Record a problem unless `ok`; returns `ok`. */
  expect(ok: boolean, text: string, lines: Array<number | undefined> = []): boolean {
    if (!ok) this.fail(text, lines);
    return ok;
  }

  /**
   * The host cannot play what the scenario needs (it refused an optional directive key): the
   * scenario is reported "not run" with `reason`, neither passed nor failed, unless it found
   * problems too.
   */
  notRun(reason: string): void {
    this.notRunReason = reason;
  }

  /**
   * Open a second connection the way the first was opened (with `--spawn`, a fresh host process
   * on the same command line: a restart) and make it the scenario's client. Its messages are
   * recorded on the same wire, after line {@link ScenarioContext.reconnectedAfter}.
   */
  async reconnect(): Promise<void> {
    if (this.reopen === undefined) throw new Error("this scenario cannot open another connection (runCheck gave it no reopen)");
    this.step("opening a second connection to the host");
    this.reconnectedAfter = this.wire.lines.length;
    const again = await this.reopen();
    this.client = again.client;
    this.spawned = again.spawned;
  }

  /** Set what the scenario is doing (named by a timeout). */
  step(doing: string): void {
    this.doing = doing;
  }

  /** The wire lines of the request carrying `commandId` and of its response. */
  exchange(commandId: string): { request: WireLine | undefined; response: WireLine | undefined } {
    const request = this.wire.lines.find(
      (l) => l.dir === "client" && (l.message?.["params"] as Record<string, unknown> | undefined)?.["commandId"] === commandId,
    );
    const id = request?.message?.["id"];
    const response =
      request === undefined
        ? undefined
        : this.wire.lines.find(
            (l) => l.line > request.line && l.dir === "server" && l.message !== undefined && !("method" in l.message) && l.message["id"] === id,
          );
    return { request, response };
  }

  /** Send a command that must be accepted; returns its result. */
  async command(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.step(`waiting for the answer to ${method}`);
    return this.client.command(method, params, { timeoutMs: Infinity });
  }

  /** Send a command that must be refused; returns the refusal's `MspError` (a result or another error is a problem, returned as `undefined`). */
  async refused(method: string, params: Record<string, unknown>): Promise<{ error: MspError | undefined; commandId: string }> {
    const commandId = typeof params["commandId"] === "string" ? params["commandId"] : uuidv7();
    this.step(`waiting for the answer to ${method}`);
    try {
      await this.client.command(method, { ...params, commandId }, { timeoutMs: Infinity });
      this.fail(`${method} was accepted; it must be refused`, [this.exchange(commandId).response?.line]);
      return { error: undefined, commandId };
    } catch (error) {
      if (error instanceof MspError && (error.kind === "commandRejected" || error.kind === "rpcError")) return { error, commandId };
      throw error;
    }
  }

  /** Create a session on the checked model ({@link ScenarioContext.model}). */
  async session(): Promise<string> {
    const result = await this.command("session/create", { model: this.model });
    const sessionId = result["sessionId"];
    if (typeof sessionId !== "string") throw new Error("session/create: the result has no sessionId");
    return sessionId;
  }

  /** Start a directed turn; the turnId must equal the turn/start's commandId (ARCHITECTURE: ids). */
  async start(sessionId: string, steps: DirectiveStep[], commandId: string = uuidv7()): Promise<StartedTurn> {
    const result = await this.command("turn/start", { sessionId, input: directive(steps), commandId });
    const ackLine = this.exchange(commandId).response?.line;
    const turnId = result["turnId"];
    if (typeof turnId !== "string") throw new Error("turn/start: the result has no turnId");
    this.expect(turnId === commandId, `turn/start: the turnId ${turnId} is not the commandId ${commandId} of the turn/start that started it`, [ackLine]);
    return { turnId, commandId, disposition: result["disposition"], ackLine };
  }

  /** Wait on the wire for the turn's `turn/completed`. */
  async terminal(turnId: string): Promise<WireLine & { params: Record<string, unknown> }> {
    this.step(`waiting for the turn/completed of turn ${turnId}`);
    const line = await this.wire.waitFor((m) => m["method"] === "turn/completed" && paramsOf(m)["turnId"] === turnId);
    return { ...line, params: paramsOf(line.message as Record<string, unknown>) };
  }

  /**
   * Wait on the wire for an item notification of `turnId` that passes `test`, which sees what the
   * notification says of its item: the whole item (`item/started`, `item/completed`), the patch
   * (`item/updated`), or for an `item/delta` its params (`itemId`, `field`, `append`, …) with the
   * item's `kind` as the wire named it before.
   */
  async item(turnId: string, test: (method: string, item: Record<string, unknown>) => boolean, what: string): Promise<WireLine> {
    this.step(`waiting for ${what} of turn ${turnId}`);
    return this.wire.waitFor((m) => {
      const method = m["method"];
      if (typeof method !== "string" || !method.startsWith("item/")) return false;
      const params = paramsOf(m);
      const item = method === "item/delta" ? { ...params, kind: this.wire.kindOf(params["itemId"]) } : params["item"];
      if (typeof item !== "object" || item === null) return false;
      const fields = item as Record<string, unknown>;
      return fields["turnId"] === turnId && test(method, fields);
    });
  }

  /** The host's last word on an item: its `item/completed`, if any. */
  completedItems(turnId: string): Array<{ line: number; item: Record<string, unknown> }> {
    const out: Array<{ line: number; item: Record<string, unknown> }> = [];
    for (const l of this.wire.lines) {
      if (l.dir !== "server" || l.message?.["method"] !== "item/completed") continue;
      const item = paramsOf(l.message)["item"] as Record<string, unknown> | undefined;
      if (item?.["turnId"] === turnId) out.push({ line: l.line, item });
    }
    return out;
  }

  /**
   * Let anything the host still had to say arrive: one `host/info` round trip, then `quietMs`.
   * A notification a host sends late (after a terminal) lands in this scenario's wire.
   */
  async settle(quietMs = 100): Promise<void> {
    this.step("waiting for the answer to host/info after the scenario");
    await this.client.command("host/info", {}, { timeoutMs: Infinity });
    await pause(quietMs);
  }
}

/** A message's params, or `{}`. */
export function paramsOf(message: Record<string, unknown>): Record<string, unknown> {
  const params = message["params"];
  return typeof params === "object" && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
}

/** The last request with `method` the client sent. */
export function lastClientRequest(lines: readonly WireLine[], method: string): WireLine | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as WireLine;
    if (line.dir === "client" && line.message?.["method"] === method) return line;
  }
  return undefined;
}

/**
 * Whether an item notification changes an item in progress (MSP 2.0): an `item/delta` (an
 * append) or an `item/updated` (a patch), as opposed to the whole items of `item/started` and
 * `item/completed`.
 */
export function isChange(method: string): boolean {
  return method === "item/delta" || method === "item/updated";
}
