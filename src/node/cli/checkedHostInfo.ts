/** checkedHostInfo: every command's first step, host/info, refusing a host whose MSP major version is not the SDK's. */
import { isCompatibleProtocol, PROTOCOL_VERSION, type MspClient } from "@muse-code/sdk";

/**
 * Check the host speaks a compatible MSP (host/info), then return its info.
 *
 * @example
 * ```ts
 * await checkedHostInfo(host.client);
 * ```
 */
export async function checkedHostInfo(client: MspClient): Promise<Record<string, unknown>> {
  const info = (await client.command("host/info", {})) as unknown as Record<string, unknown>;
  const version = String(info["protocolVersion"]);
  if (!isCompatibleProtocol(version)) throw new Error(`the host speaks MSP ${version}; muse speaks MSP ${PROTOCOL_VERSION}`);
  return info;
}
