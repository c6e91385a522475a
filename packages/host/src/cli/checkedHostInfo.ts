/** checkedHostInfo: every command's first step, host/info, refusing a host whose MSP major version is not the SDK's. */
import { isCompatibleProtocol, MspError, PROTOCOL_VERSION, type MspClient } from "@muse-code/sdk";

/**
 * Check the host speaks a compatible MSP (host/info), then return its info. A host of another
 * major version is refused with one line naming both versions (the SDK refuses it itself: a
 * `protocol` MspError whose data carries `hostVersion`).
 */
export async function checkedHostInfo(client: MspClient): Promise<Record<string, unknown>> {
  let info: Record<string, unknown>;
  try {
    info = (await client.command("host/info", {})) as unknown as Record<string, unknown>;
  } catch (error) {
    if (MspError.is(error) && error.kind === "protocol" && error.data.hostVersion !== undefined) throw refusal(error.data.hostVersion);
    throw error;
  }
  const version = String(info["protocolVersion"]);
  if (!isCompatibleProtocol(version)) throw refusal(version);
  return info;
}

function refusal(hostVersion: string): Error {
  return new Error(`the host speaks MSP ${hostVersion}; muse speaks MSP ${PROTOCOL_VERSION}`);
}
