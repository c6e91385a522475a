/** How the page words an error: an MspError as `kind: message`, anything else by its own message. */
import { MspError } from "@muse-code/sdk";

/** `connectionClosed: connection closed: the host closed the connection`, `TypeError: …`, … */
export function describeError(error: unknown): string {
  if (MspError.is(error)) return `${error.kind}: ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
