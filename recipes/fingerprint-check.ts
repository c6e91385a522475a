/**
 * fingerprint-check: ask the host who it is (host/info) before doing any work, and log its
 * fingerprint. A host whose protocolVersion this SDK does not speak (another major) is refused by
 * the SDK itself: host/info rejects with MspError kind `protocol`, whose data names both versions.
 */
import assert from "node:assert/strict";
import { MspError, PROTOCOL_VERSION, type CommandResult, type MspClient } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

// #region check
/** Ask the host who it is; close the connection to one that speaks another major version of MSP. */
async function hostInfo(msp: MspClient): Promise<CommandResult<"host/info">> {
  try {
    return await msp.command("host/info", {});
  } catch (error) {
    if (MspError.is(error) && error.kind === "protocol" && error.data.hostVersion !== undefined) {
      // The SDK refused the host: error.data.hostVersion is what it speaks, error.data.sdkVersion what we do.
      await msp.close();
    }
    throw error;
  }
}
// #endregion check

export const recipe: Recipe = {
  name: "fingerprint-check",
  summary: "host/info first, log the fingerprint; the SDK refuses a host of another major (MspError protocol)",
  // Part 1 recorded from the reference host: `npm run recipes -- --live --only fingerprint-check --record DIR`.
  // Part 2 (fingerprint-check.2.jsonl) is written by hand: a host speaking MSP 3.0 cannot be recorded.
  transcript: "fingerprint-check.jsonl",
  liveModel: "scripted-small.json",
  async run(env) {
    // #region accept
    const msp = await env.connect();
    const info = await hostInfo(msp);
    // Log the fingerprint with every bug report: it names the exact host build.
    env.log(`host ${info.name} ${info.version}, MSP ${info.protocolVersion}, ${info.fingerprint}`);
    // #endregion accept
    assert.equal(info.protocolVersion.split(".")[0], PROTOCOL_VERSION.split(".")[0], "a host that answers speaks our major");
    assert.match(info.fingerprint, /^sha256:[0-9a-f]{64}$/);
    assert.ok(info.models.length > 0, "the host lists its models");
    await msp.close();

    if (env.mode !== "canned") return; // the reference host speaks our version: no refusal to show
    // The second transcript is a host from the future: MSP 3.0.
    const newer = await env.connect();
    const refused = await hostInfo(newer).then(
      () => assert.fail("host/info of an MSP 3.0 host must reject"),
      (error: unknown) => error,
    );
    assert.ok(MspError.is(refused) && refused.kind === "protocol", `refused with MspError protocol: ${String(refused)}`);
    assert.equal(refused.data.hostVersion, "3.0");
    assert.equal(refused.data.sdkVersion, PROTOCOL_VERSION);
    assert.equal(refused.data.problem, `the host speaks MSP 3.0; this SDK speaks MSP ${PROTOCOL_VERSION}`);
    assert.equal(newer.isClosed, true, "the refused host's connection is closed");
    env.log(`refused: ${refused.message}`);
  },
};
