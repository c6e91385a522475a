/**
 * fingerprint-check: ask the host who it is (host/info) before doing any work, and refuse a
 * host whose protocolVersion this SDK does not speak (a different major), with an error that
 * names the host and both versions.
 */
import assert from "node:assert/strict";
import { isCompatibleProtocol, PROTOCOL_VERSION, type CommandResult, type MspClient } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

// #region check
/** Ask the host who it is; refuse one that speaks another major version of MSP. */
async function requireCompatibleHost(msp: MspClient): Promise<CommandResult<"host/info">> {
  const info = await msp.command("host/info", {});
  if (!isCompatibleProtocol(info.protocolVersion)) {
    await msp.close();
    throw new Error(
      `refusing host ${info.name} ${info.version} (${info.fingerprint}): it speaks MSP ${info.protocolVersion}, ` + `this app speaks MSP ${PROTOCOL_VERSION}`,
    );
  }
  return info;
}
// #endregion check

export const recipe: Recipe = {
  name: "fingerprint-check",
  summary: "host/info first: refuse a host whose protocolVersion is incompatible, with a clear error",
  transcript: "fingerprint-check.jsonl",
  liveModel: "scripted-small.json",
  async run(env) {
    // #region accept
    const msp = await env.connect();
    const info = await requireCompatibleHost(msp);
    // Log the fingerprint with every bug report: it names the exact host build.
    env.log(`host ${info.name} ${info.version}, MSP ${info.protocolVersion}, ${info.fingerprint}`);
    // #endregion accept
    assert.ok(isCompatibleProtocol(info.protocolVersion));
    assert.match(info.fingerprint, /^sha256:[0-9a-f]{64}$/);
    assert.ok(info.models.length > 0, "the host lists its models");
    await msp.close();

    if (env.mode !== "canned") return; // the reference host speaks our version: no refusal to show
    // The second transcript is a host from the future: MSP 2.0.
    const newer = await env.connect();
    await assert.rejects(
      requireCompatibleHost(newer),
      /^Error: refusing host muse 1\.0\.0-beta\.2 \(sha256:[0-9a-f]{64}\): it speaks MSP 2\.0, this app speaks MSP 1\.0$/,
    );
    assert.equal(newer.isClosed, true, "the refused host's connection is closed");
    env.log("refused a host speaking MSP 2.0");
  },
};
