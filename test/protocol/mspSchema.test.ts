/**
 * msp.schema.json, the committed wire schema: it is what scripts/msp-schema.ts generates from
 * packages/protocol/src/types.ts today (the drift `npm run schema:check` fails on), it names every
 * method the protocol package lists, with the kind and direction it has there, and every committed
 * transcript (recorded wires, honest and broken) passes it, except the one broken fixture whose lie
 * is a type: a negative token count.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Commands, HostRequests, Notifications } from "../../packages/protocol/src/methods.js";
import type { WireLine } from "../../packages/host/src/cli/check/checkWire.js";
import { schemaProblems } from "../../packages/host/src/cli/check/schemaCheck.js";
import { buildMspSchema, SCHEMA_PATH, serializeSchema } from "../../scripts/msp-schema.js";
import { repoRoot } from "../helpers/repoRoot.js";

const committed = readFileSync(SCHEMA_PATH, "utf8");
const schema = JSON.parse(committed) as {
  $schema: string;
  "x-msp-methods": Record<string, { kind: string; direction: string; params: { $ref: string }; result?: { $ref: string } }>;
  $defs: Record<string, unknown>;
};

/** A committed transcript's lines as the wire lines muse check records. */
function transcript(path: string): WireLine[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((text) => text !== "")
    .map((text, i) => {
      const { dir, raw } = JSON.parse(text) as { dir: "client" | "server"; raw: string };
      let message: Record<string, unknown> | undefined;
      try {
        message = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        message = undefined;
      }
      return { line: i + 1, dir, raw, message };
    });
}

describe("msp.schema.json", () => {
  it("is what scripts/msp-schema.ts generates from the wire types", async () => {
    expect(await serializeSchema(buildMspSchema())).toBe(committed);
  }, 60_000);

  it("is JSON Schema 2020-12 and lists every command, notification and host request, each way it goes", () => {
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    const expected = [
      ...Object.values(Commands).map((m) => [m, "command", "clientToHost"]),
      ...Object.values(Notifications).map((m) => [m, "notification", "hostToClient"]),
      ...Object.values(HostRequests).map((m) => [m, "hostRequest", "hostToClient"]),
    ].sort();
    const listed = Object.entries(schema["x-msp-methods"])
      .map(([method, entry]) => [method, entry.kind, entry.direction])
      .sort();
    expect(listed).toEqual(expected);
    // Every reference resolves; requests have a result, notifications none.
    for (const [method, entry] of Object.entries(schema["x-msp-methods"])) {
      for (const ref of [entry.params, entry.result])
        if (ref !== undefined) expect(schema.$defs[ref.$ref.replace("#/$defs/", "")], `${method} ${ref.$ref}`).toBeDefined();
      expect(entry.result === undefined, method).toBe(entry.kind === "notification");
    }
  });

  it("passes every committed transcript but the one whose lie is a type", () => {
    const found: Record<string, string[]> = {};
    for (const dir of ["transcripts", "transcripts/broken"]) {
      for (const name of readdirSync(join(repoRoot, dir)).filter((f) => f.endsWith(".jsonl"))) {
        const problems = schemaProblems(transcript(join(repoRoot, dir, name)));
        if (problems.length > 0) found[`${dir}/${name}`] = problems;
      }
    }
    expect(found).toEqual({
      "transcripts/broken/invariant-U-negative-count.jsonl": [
        'line 17: turn/completed from the host: $.params.usage.inputTokens must be >= 0 (schema rule "minimum" at msp.schema.json#/$defs/TurnUsage/properties/inputTokens/minimum)',
      ],
    });
  });
});
