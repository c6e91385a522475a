/** `muse info`: the host's name, version, protocol version, fingerprint, capabilities and models. */
import type { CommandContext } from "./commandContext.js";
import { ExitCodes, type ExitCode } from "./exitCodes.js";
import { checkedHostInfo } from "./checkedHostInfo.js";

/**
 * The lines `muse info` prints for a host/info result: one `label  value` line per field, and one
 * line per model (`id  description`).
 */
export function infoLines(info: Record<string, unknown>): string[] {
  const capabilities = info["capabilities"];
  const enabled =
    typeof capabilities === "object" && capabilities !== null
      ? Object.entries(capabilities)
          .filter(([, on]) => on === true)
          .map(([name]) => name)
      : [];
  const lines = [
    `name              ${String(info["name"])}`,
    `version           ${String(info["version"])}`,
    `protocol version  ${String(info["protocolVersion"])}`,
    `fingerprint       ${String(info["fingerprint"])}`,
    `capabilities      ${enabled.length === 0 ? "(none)" : enabled.join(", ")}`,
  ];
  const models = Array.isArray(info["models"]) ? (info["models"] as Array<Record<string, unknown>>) : [];
  if (models.length === 0) lines.push("models            (none)");
  models.forEach((model, i) => {
    const description = typeof model["description"] === "string" && model["description"] !== "" ? `  ${model["description"]}` : "";
    lines.push(`${i === 0 ? "models            " : "                  "}${String(model["id"])}${description}`);
  });
  return lines;
}

/** Run `muse info`: print the host's info, as lines or (`json`) one JSON object. */
export async function infoCommand(ctx: CommandContext, options: { json: boolean }): Promise<ExitCode> {
  const info = await checkedHostInfo(ctx.host.client);
  if (options.json) ctx.out(JSON.stringify(info));
  else for (const line of infoLines(info)) ctx.out(line);
  return ExitCodes.completed;
}
