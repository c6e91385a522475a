/**
 * MSP method names: the commands a client sends and the notifications a host emits.
 * Shared by the client and the reference host; nothing here touches a runtime.
 */

/**
 * The commands (JSON-RPC requests) a client may send to an MSP host.
 *
 * @example
 * ```ts
 * await msp.command(Commands.turnStart, { sessionId, input });
 * ```
 */
export const Commands = {
  hostInfo: "host/info",
  sessionCreate: "session/create",
  sessionResume: "session/resume",
  sessionSetModel: "session/setModel",
  turnStart: "turn/start",
  turnCancel: "turn/cancel",
  turnSteer: "turn/steer",
} as const;

/**
 * One of the {@link Commands} method names, e.g. `"turn/cancel"`.
 *
 * @example
 * ```ts
 * function isCommand(method: string): method is CommandMethod {
 *   return (Object.values(Commands) as string[]).includes(method);
 * }
 * ```
 */
export type CommandMethod = (typeof Commands)[keyof typeof Commands];

/**
 * The notifications an MSP host emits, in the protocol's own words.
 *
 * @example
 * ```ts
 * client.events.on(Notifications.turnCompleted, (params) => console.log(params.terminal));
 * ```
 */
export const Notifications = {
  turnStarted: "turn/started",
  itemStarted: "item/started",
  itemDelta: "item/delta",
  itemUpdated: "item/updated",
  itemCompleted: "item/completed",
  turnCompleted: "turn/completed",
  inboxCancelled: "inbox/cancelled",
} as const;

/**
 * One of the {@link Notifications} method names, e.g. `"turn/completed"`.
 *
 * @example
 * ```ts
 * function isMspNotification(method: string): method is NotificationMethod {
 *   return (Object.values(Notifications) as string[]).includes(method);
 * }
 * ```
 */
export type NotificationMethod = (typeof Notifications)[keyof typeof Notifications];

/**
 * The requests an MSP host sends to a client (host → client). MSP has one: `tool/approve`, the
 * host asking before it runs a tool call. The client answers each exactly once with a
 * {@link ToolApproveResult}.
 *
 * @example
 * ```ts
 * // What a host sends, and what the client answers:
 * const ask = { jsonrpc: "2.0", id: 3, method: HostRequests.toolApprove, params: { sessionId, turnId, itemId: "i1", callId: "c1", tool: "shell", args: '{"command":"ls"}' } };
 * const answer = { jsonrpc: "2.0", id: 3, result: { decision: "approve" } };
 * console.log(ask.method, answer.result.decision);
 * ```
 */
export const HostRequests = {
  toolApprove: "tool/approve",
} as const satisfies Record<string, HostRequestMethod>;

/**
 * One of the host → client request methods (`HostRequests` in the protocol module): today only `"tool/approve"`.
 *
 * @example
 * ```ts
 * const asked: HostRequestMethod = "tool/approve";
 * console.log(`the host sent ${asked}`);
 * ```
 */
export type HostRequestMethod = "tool/approve";

/**
 * The JSON-RPC error code an MSP host uses when it refuses a command.
 * The error's `data` carries `{ commandId, reason, ...details }`.
 *
 * @example
 * ```ts
 * // How a host refuses a command on the wire:
 * const refusal = {
 *   jsonrpc: "2.0",
 *   id: 7,
 *   error: { code: COMMAND_REJECTED_CODE, message: "turn already ended", data: { commandId: "c7", reason: "already_terminal" } },
 * };
 * // The client rejects with an MspError of kind "commandRejected" whose `data` is that `error.data`:
 * try {
 *   await client.command("turn/cancel", { sessionId, turnId });
 * } catch (error) {
 *   if (error instanceof MspError && error.kind === "commandRejected") console.log(error.data.reason);
 * }
 * ```
 */
export const COMMAND_REJECTED_CODE = -32001;

/**
 * The MSP protocol version this package speaks: 2.1 (steering, scoped approvals, usage, policy
 * stops; additive over 2.0). Hosts report theirs in `host/info`; any 2.x host is compatible, a
 * different major version is not.
 *
 * @example
 * ```ts
 * const info = await client.command("host/info", {});
 * if (!isCompatibleProtocol(info.protocolVersion)) throw new Error("old host");
 * ```
 */
export const PROTOCOL_VERSION = "2.1";
