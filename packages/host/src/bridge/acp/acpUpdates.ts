/**
 * The mapping of one ACP prompt turn's `session/update` notifications to what MSP shows
 * ({@link BridgeEvent}s):
 * - `agent_message_chunk` / `agent_thought_chunk` → a `message` / `reasoning` item, each chunk's
 *   text an `item/delta` append. Consecutive chunks of one kind (and one `messageId`, when the
 *   agent gives one) are one item; any other update ends it, `completed`.
 * - `tool_call` → a toolCall item (kind `execute` → tool `shell`, `args` `{"command": …}` as the
 *   agent's `rawInput.command` says it; any other kind → the tool's `name`, else its kind, `args`
 *   its `rawInput`). A `tool_call` for a call already open (the permission request introduced it)
 *   updates it. A call announced before its input (Claude Code's: `rawInput` `{}` while the model
 *   still streams it) starts its item once an update brings the input, a status, output or a
 *   permission request, so that its `args` are what runs, never a placeholder title.
 * - `tool_call_update` → its `_meta.terminal_output.data` (the `terminal_output` extension the
 *   bridge asks for at `initialize`, ./acpAgentProcess.ts: a running command's output, in order) as
 *   appends to the call's output; its text `content` (or, failing that, the text of `rawOutput`) as
 *   the call's whole output; `completed` / `failed` end the item. ACP 2.4.0 has no `cancelled` status: a call
 *   a stop leaves open is closed by the bridge.
 * - `usage_update {used, size}` → usage: `used` (the tokens in the agent's context) as
 *   `inputTokens`, since ACP reports no output or reasoning counts.
 * - everything else (plans, modes, commands, notices) is not shown.
 */
import type { PromptResponse, SessionUpdate, ToolCall, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { BridgeEvent } from "../bridgeEvents.js";

/**
 * What MSP's toolCall item shows of an ACP tool call: its tool, call id and args (JSON text).
 *
 * @example
 * ```ts
 * const view: AcpToolCallView = { tool: "shell", callId: "call_1", args: '{"command":"ls"}' };
 * ```
 */
export interface AcpToolCallView {
  tool: string;
  callId: string;
  args: string;
}

/**
 * The command line of an `execute` call's `rawInput.command` (a `sh -c SCRIPT` argv is its script), or `undefined`.
 *
 * @example
 * ```ts
 * commandOf({ command: ["/bin/bash", "-c", "sleep 47"] }); // "sleep 47"
 * ```
 */
export function commandOf(rawInput: unknown): string | undefined {
  const command = (rawInput as { command?: unknown } | null | undefined)?.command;
  if (typeof command === "string") return command;
  if (!Array.isArray(command) || !command.every((a): a is string => typeof a === "string")) return undefined;
  const [, flag, script] = command;
  if (command.length === 3 && (flag === "-c" || flag === "-lc") && script !== undefined) return script;
  return command.join(" ");
}

/**
 * The toolCall view of an ACP tool call: kind `execute` is the host's `shell`, `args`
 * `{"command": …}`; any other call is named by its `name` (else its kind, else `tool`), `args` its
 * `rawInput` (else `{"title": …}`).
 *
 * @example
 * ```ts
 * toolCallView({ toolCallId: "call_1", title: "sleep 47", kind: "execute", rawInput: { command: ["/bin/bash", "-c", "sleep 47"] } });
 * // { tool: "shell", callId: "call_1", args: '{"command":"sleep 47"}' }
 * ```
 */
export function toolCallView(call: Pick<ToolCall, "toolCallId" | "title" | "kind" | "name" | "rawInput">): AcpToolCallView {
  if (call.kind === "execute") return { tool: "shell", callId: call.toolCallId, args: JSON.stringify({ command: commandOf(call.rawInput) ?? call.title }) };
  const tool = call.name ?? call.kind ?? "tool";
  return { tool, callId: call.toolCallId, args: JSON.stringify(call.rawInput ?? { title: call.title }) };
}

/**
 * The text a tool call shows: its text `content` blocks, else the output fields of its `rawOutput`; `undefined` when neither has text.
 *
 * @example
 * ```ts
 * outputOf({ rawOutput: { formatted_output: "hi\n", exit_code: 0 } }); // "hi\n"
 * ```
 */
export function outputOf(update: Pick<ToolCallUpdate, "content" | "rawOutput">): string | undefined {
  const texts = (update.content ?? []).flatMap((c) => (c.type === "content" && c.content.type === "text" ? [c.content.text] : []));
  if (texts.length > 0) return texts.join("\n");
  const raw = update.rawOutput;
  if (typeof raw === "string") return raw;
  if (raw === null || typeof raw !== "object") return undefined;
  const fields = raw as Record<string, unknown>;
  for (const key of ["formatted_output", "aggregated_output", "output", "stdout"]) {
    const value = fields[key];
    if (typeof value === "string") return value;
  }
  return undefined;
}

/**
 * The output a `tool_call_update` streams through the `terminal_output` extension of `_meta`
 * (`{terminal_output: {terminal_id, data}}`), or `undefined`.
 *
 * @example
 * ```ts
 * terminalOutputOf({ _meta: { terminal_output: { terminal_id: "call_1", data: "hi\n" } } }); // "hi\n"
 * ```
 */
export function terminalOutputOf(update: Pick<ToolCallUpdate, "_meta">): string | undefined {
  const data = (update._meta?.["terminal_output"] as { data?: unknown } | null | undefined)?.data;
  return typeof data === "string" ? data : undefined;
}

/**
 * The usage event of a prompt's answer: ACP's unstable `PromptResponse.usage` (the turn's own
 * input, output and thought tokens), when the agent sends it; none otherwise.
 *
 * @example
 * ```ts
 * promptUsage({ stopReason: "end_turn", usage: { inputTokens: 120, outputTokens: 8, thoughtTokens: 3, totalTokens: 131 } });
 * // [{ type: "usage", usage: { inputTokens: 120, outputTokens: 8, reasoningTokens: 3 } }]
 * ```
 */
export function promptUsage(response: PromptResponse | undefined): BridgeEvent[] {
  const u = (response as { usage?: { inputTokens: number; outputTokens: number; thoughtTokens?: number | null } | null } | undefined)?.usage;
  if (u === undefined || u === null) return [];
  return [{ type: "usage", usage: { inputTokens: u.inputTokens, outputTokens: u.outputTokens, reasoningTokens: u.thoughtTokens ?? 0 } }];
}

/** Why a failed call failed, as its `rawOutput` says (`exit code N`), else a plain reason. */
function failureOf(update: Pick<ToolCallUpdate, "rawOutput">): string {
  const code = (update.rawOutput as { exit_code?: unknown } | null | undefined)?.exit_code;
  return typeof code === "number" ? `exit code ${code}` : "the agent reported the call failed";
}

/**
 * Whether the agent announced `call` before its input: no `rawInput` (or `{}`), no status past
 * `pending`, no output yet (a `terminal` content block is where output will go, not output).
 */
function awaitsInput(call: Pick<ToolCall, "rawInput" | "status" | "content" | "rawOutput" | "_meta">): boolean {
  const input = call.rawInput;
  const noInput = input === undefined || input === null || (typeof input === "object" && !Array.isArray(input) && Object.keys(input).length === 0);
  const noOutput = outputOf(call) === undefined && terminalOutputOf(call) === undefined;
  return noInput && (call.status === undefined || call.status === null || call.status === "pending") && noOutput;
}

/** A call as the agent has described it so far: `update`'s fields over what was known. */
function merged(known: ToolCall | undefined, update: ToolCallUpdate): ToolCall {
  const defined = Object.fromEntries(Object.entries(update).filter(([, value]) => value !== undefined && value !== null));
  return { title: update.toolCallId, ...known, ...defined } as ToolCall;
}

/**
 * One ACP turn's updates, mapped; one instance per prompt turn.
 *
 * @example
 * ```ts
 * const updates = new AcpTurnUpdates();
 * items.take(updates.accept({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hi" } }));
 * items.take(updates.endText());
 * ```
 */
export class AcpTurnUpdates {
  /** The open message or reasoning item: its id, kind and `messageId`. */
  #text: { id: string; kind: "message" | "reasoning"; messageId: string | null } | undefined;
  #textCount = 0;
  /** Every open tool call, by ACP id: the output sent of it, and the output that replaces it at its end. */
  readonly #calls = new Map<string, { output: string; replace?: string }>();
  /** Tool calls this turn ended (or the session closed): later updates of them are absorbed. */
  readonly #ended = new Set<string>();
  /** Tool calls announced without their input yet, by ACP id: what the agent has said of each so far. */
  readonly #awaitingInput = new Map<string, ToolCall>();

  /** Whether `toolCallId` is open. */
  isOpen(toolCallId: string): boolean {
    return this.#calls.has(toolCallId);
  }

  /** Stops mapping `toolCallId` (the session closed its item): what the agent says of it later is absorbed. */
  forget(toolCallId: string): void {
    this.#calls.delete(toolCallId);
    this.#awaitingInput.delete(toolCallId);
    this.#ended.add(toolCallId);
  }

  /** The events of one `session/update`. */
  accept(update: SessionUpdate): BridgeEvent[] {
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        if (update.content.type !== "text") return [];
        const kind = update.sessionUpdate === "agent_message_chunk" ? "message" : "reasoning";
        return this.#chunk(kind, update.messageId ?? null, update.content.text);
      }
      case "tool_call":
        return [...this.endText(), ...this.#toolCall(update)];
      case "tool_call_update":
        return [...this.endText(), ...this.#toolCallUpdate(update)];
      case "usage_update":
        return [{ type: "usage", usage: { inputTokens: update.used, outputTokens: 0, reasoningTokens: 0 } }];
      default:
        return [];
    }
  }

  /**
   * The events of a `session/request_permission` about `toolCall`: its item started when the
   * request is the first the turn hears of the call (codex-acp asks before its `tool_call`).
   */
  permissionAsked(toolCall: ToolCallUpdate): BridgeEvent[] {
    if (this.#calls.has(toolCall.toolCallId) || this.#ended.has(toolCall.toolCallId)) return [];
    const known = merged(this.#awaitingInput.get(toolCall.toolCallId), toolCall);
    this.#awaitingInput.delete(toolCall.toolCallId);
    return [...this.endText(), this.#start({ kind: "other", ...known })];
  }

  /** Ends the open message or reasoning item, `completed` (at another update, and at the turn's end). */
  endText(): BridgeEvent[] {
    const open = this.#text;
    if (open === undefined) return [];
    this.#text = undefined;
    return [{ type: "itemCompleted", agentItemId: open.id, status: "completed" }];
  }

  #chunk(kind: "message" | "reasoning", messageId: string | null, text: string): BridgeEvent[] {
    const out: BridgeEvent[] = [];
    if (this.#text !== undefined && (this.#text.kind !== kind || this.#text.messageId !== messageId)) out.push(...this.endText());
    if (this.#text === undefined) {
      this.#textCount += 1;
      this.#text = { id: `${kind}:${this.#textCount}`, kind, messageId };
      out.push({ type: "itemStarted", agentItemId: this.#text.id, kind });
    }
    if (text !== "") out.push({ type: "itemDelta", agentItemId: this.#text.id, field: "text", append: text });
    return out;
  }

  #toolCall(call: ToolCall): BridgeEvent[] {
    if (this.#ended.has(call.toolCallId)) return [];
    if (!this.#calls.has(call.toolCallId) && !this.#awaitingInput.has(call.toolCallId)) {
      if (awaitsInput(call)) {
        this.#awaitingInput.set(call.toolCallId, call);
        return [];
      }
      return [this.#start(call), ...this.#toolCallUpdate(call)];
    }
    return this.#toolCallUpdate(call);
  }

  /** The item of a call the turn now knows enough of to show. */
  #start(call: ToolCall): BridgeEvent {
    this.#calls.set(call.toolCallId, { output: "" });
    return { type: "itemStarted", agentItemId: call.toolCallId, kind: "toolCall", ...toolCallView(call) };
  }

  #toolCallUpdate(update: ToolCallUpdate): BridgeEvent[] {
    const out: BridgeEvent[] = [];
    const awaiting = this.#awaitingInput.get(update.toolCallId);
    if (awaiting !== undefined) {
      const known = merged(awaiting, update);
      if (awaitsInput(known)) {
        this.#awaitingInput.set(update.toolCallId, known);
        return [];
      }
      this.#awaitingInput.delete(update.toolCallId);
      out.push(this.#start(known));
    }
    const call = this.#calls.get(update.toolCallId);
    if (call === undefined) return out;
    const streamed = terminalOutputOf(update);
    if (streamed !== undefined && streamed !== "" && call.replace === undefined) {
      out.push({ type: "itemDelta", agentItemId: update.toolCallId, field: "visibleOutput", append: streamed });
      call.output += streamed;
    }
    const output = outputOf(update);
    if (output !== undefined && output !== (call.replace ?? call.output)) {
      // ACP's content replaces the call's content: an extension of what was sent is streamed, anything else replaces the output at the end.
      if (call.replace === undefined && output.startsWith(call.output)) {
        out.push({ type: "itemDelta", agentItemId: update.toolCallId, field: "visibleOutput", append: output.slice(call.output.length) });
        call.output = output;
      } else call.replace = output;
    }
    if (update.status === "completed" || update.status === "failed") {
      this.#calls.delete(update.toolCallId);
      this.#ended.add(update.toolCallId);
      out.push({
        type: "itemCompleted",
        agentItemId: update.toolCallId,
        status: update.status,
        ...(update.status === "failed" ? { failureReason: failureOf(update) } : {}),
        ...(call.replace === undefined ? {} : { replaceText: call.replace }),
      });
    }
    return out;
  }
}
