/**
 * msp-schema: msp.schema.json, the machine-readable MSP wire (JSON Schema 2020-12), generated from
 * the one hand-written source, packages/protocol/src/types.ts, with ts-json-schema-generator.
 *
 *   npx tsx scripts/msp-schema.ts           write msp.schema.json
 *   npx tsx scripts/msp-schema.ts --check   exit 1 when the committed file differs from the types
 *
 * What the file holds (docs/protocol.md, "The schema"):
 * - `$defs`: every exported type of types.ts that describes JSON, under its TypeScript name; the
 *   inline params and results of `CommandMap` lifted out under `<Method>Params`/`<Method>Result`
 *   (`session/setModel` → `SessionSetModelParams`); and the JSON-RPC 2.0 envelopes
 *   (`JsonRpcRequest`, `JsonRpcNotification`, `JsonRpcSuccess`, `JsonRpcFailure`), which are
 *   JSON-RPC's, not MSP's, so this script writes them.
 * - `x-msp-methods`: every method, keyed by name: `kind` (`command`, `notification`,
 *   `hostRequest`), `direction` (`clientToHost` or `hostToClient`, of the request or
 *   notification), `params` and, for requests, `result`, each a `$ref` into `$defs`.
 * - `x-msp-errors`: by JSON-RPC error code, the `data` an error of that code carries (-32001,
 *   a refused command: `RejectionData`).
 *
 * What the generator does not say, this script adds after it (each step below names why):
 * - the three `*Map` interfaces are TypeScript's way to index methods: they become
 *   `x-msp-methods` and leave `$defs`;
 * - `| undefined` in an index signature (RejectionData) is TypeScript's, never JSON's: dropped;
 * - a union of string literals only (`ApprovalDecision`: `ApprovalOffer | "cancelled"`) becomes
 *   one `enum`, so a wrong value fails one rule and generates one type;
 * - the `Item` union is a `oneOf` tagged by `kind` (with OpenAPI's `discriminator`, which
 *   validators such as ajv use to report the failing branch only);
 * - `ItemPatch`'s fields carry no description (an intersection keeps one side's, wrong for the
 *   other kind);
 * - TypeScript has no integer type: the counts the protocol defines as integers get
 *   `type: "integer"` (and `minimum` where docs/protocol.md gives one), from INTEGER_FIELDS.
 *
 * The output is deterministic: keys sorted at every level, arrays kept in source order, laid out
 * by the repository's prettier configuration.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { format, resolveConfig } from "prettier";
import { createGenerator } from "ts-json-schema-generator";
import { PROTOCOL_VERSION } from "../packages/protocol/src/methods.js";

/** A JSON Schema node, as this script reads and writes it. */
type SchemaNode = { [key: string]: unknown };

/** The repository root. */
const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Where the schema is committed (and what the SDK package ships as `@muse-code/sdk/msp.schema.json`). */
export const SCHEMA_PATH = `${ROOT}msp.schema.json`;
/** The source of truth. */
const TYPES_PATH = `${ROOT}packages/protocol/src/types.ts`;
/** The schema's `$id`: a name, not a place to fetch it from. */
export const SCHEMA_ID = "urn:muse-code:msp.schema.json";

/** The fields the protocol counts in whole numbers: definition → property → its minimum (undefined: none stated). */
const INTEGER_FIELDS: Record<string, Record<string, number | undefined>> = {
  ItemBase: { revision: 0 },
  MessageItem: { revision: 0 },
  ReasoningItem: { revision: 0 },
  ToolCallItem: { revision: 0 },
  ItemPatch: { revision: 0 },
  ItemDeltaParams: { revision: 0 },
  TurnStartedParams: { depth: 1 },
  TurnCompletedParams: { durationMs: 0 },
  TurnUsage: { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 },
  SessionResumeResult: { replayed: 0 },
};

/** `session/setModel` → `SessionSetModel`. */
function pascal(method: string): string {
  return method
    .split("/")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

const ref = (name: string) => ({ $ref: `#/$defs/${name}` });

/** The JSON-RPC 2.0 envelopes MSP messages travel in (JSON-RPC's definitions, open to other members: the seed puts `emittedAtMs` beside `params`). */
function envelopes(): Record<string, SchemaNode> {
  const jsonrpc = { const: "2.0", description: 'Always "2.0".' };
  return {
    JsonRpcId: {
      description: "A JSON-RPC request id: the SDK sends strings; JSON-RPC also allows integers.",
      anyOf: [{ type: "string" }, { type: "integer" }],
    },
    JsonRpcRequest: {
      description:
        "A JSON-RPC 2.0 request: an MSP command (client → host) or host request (host → client). `params` is the method's params schema in `x-msp-methods`.",
      type: "object",
      properties: { jsonrpc, id: ref("JsonRpcId"), method: { type: "string" }, params: { type: "object" } },
      required: ["jsonrpc", "id", "method"],
    },
    JsonRpcNotification: {
      description:
        "A JSON-RPC 2.0 notification: an MSP notification (host → client). `params` is the method's params schema in `x-msp-methods`; `emittedAtMs` (milliseconds since the Unix epoch) may sit beside it.",
      type: "object",
      properties: { jsonrpc, method: { type: "string" }, params: { type: "object" }, emittedAtMs: { type: "number" } },
      required: ["jsonrpc", "method"],
    },
    JsonRpcSuccess: {
      description: "A JSON-RPC 2.0 result: `result` is the answered method's result schema in `x-msp-methods`.",
      type: "object",
      properties: { jsonrpc, id: ref("JsonRpcId"), result: {} },
      required: ["jsonrpc", "id", "result"],
    },
    JsonRpcFailure: {
      description: "A JSON-RPC 2.0 error: `error.data` is, for the codes in `x-msp-errors`, that code's schema (-32001: RejectionData).",
      type: "object",
      properties: {
        jsonrpc,
        id: { anyOf: [ref("JsonRpcId"), { type: "null" }] },
        error: {
          type: "object",
          properties: { code: { type: "integer" }, message: { type: "string" }, data: ref("JsonValue") },
          required: ["code", "message"],
        },
      },
      required: ["jsonrpc", "id", "error"],
    },
  };
}

/** Rewrite draft-07 `#/definitions/` refs to 2020-12 `#/$defs/`, TSDoc links to code spans, and drop TypeScript's `| undefined` (`{not: {}}` in an anyOf). */
function normalize(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalize);
  if (typeof node !== "object" || node === null) return node;
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node as SchemaNode)) {
    if (key === "$ref" && typeof value === "string") out[key] = value.replace("#/definitions/", "#/$defs/");
    // TSDoc's {@link X} reads as `X` outside TypeScript.
    else if (key === "description" && typeof value === "string") out[key] = value.replace(/ *\{@link\s+([^}\s]+)\s*\} */g, " `$1` ");
    else out[key] = normalize(value);
  }
  const anyOf = out["anyOf"];
  if (Array.isArray(anyOf)) {
    const kept = anyOf.filter((branch) => JSON.stringify(branch) !== '{"not":{}}');
    if (kept.length === 1) {
      delete out["anyOf"];
      Object.assign(out, kept[0]);
    } else out["anyOf"] = kept;
  }
  return out;
}

/** Every object key sorted, at every level; arrays keep their order. */
function sortKeys(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(sortKeys);
  if (typeof node !== "object" || node === null) return node;
  return Object.fromEntries(
    Object.keys(node)
      .sort()
      .map((key) => [key, sortKeys((node as SchemaNode)[key])]),
  );
}

function propertiesOf(def: SchemaNode | undefined, where: string): Record<string, SchemaNode> {
  const properties = def?.["properties"];
  if (typeof properties !== "object" || properties === null) throw new Error(`msp-schema: ${where} has no properties in the generated schema`);
  return properties as Record<string, SchemaNode>;
}

/** The strings a schema allows when it allows only string literals (`const`, `enum`, or a `$ref` to such a definition), else undefined. */
function literals(defs: Record<string, SchemaNode>, node: SchemaNode): string[] | undefined {
  const target = typeof node["$ref"] === "string" ? defs[node["$ref"].replace("#/$defs/", "")] : node;
  if (target === undefined || target["type"] !== "string") return undefined;
  if (typeof target["const"] === "string") return [target["const"]];
  const values = target["enum"];
  return Array.isArray(values) && values.every((v) => typeof v === "string") ? values : undefined;
}

/** A definition that is a union of string literals only (`ApprovalOffer | "cancelled"`) becomes one `enum`: one rule to fail, one type to generate. */
function flattenLiteralUnions(defs: Record<string, SchemaNode>): void {
  for (const def of Object.values(defs)) {
    const branches = def["anyOf"];
    if (!Array.isArray(branches)) continue;
    const sets = branches.map((branch) => literals(defs, branch as SchemaNode));
    if (sets.some((set) => set === undefined)) continue;
    delete def["anyOf"];
    def["type"] = "string";
    def["enum"] = [...new Set(sets.flat())];
  }
}

/** A method's params or result: a `$ref` stays, an inline schema is lifted into `$defs` under `name`. */
function lift(defs: Record<string, SchemaNode>, schema: SchemaNode, name: string): SchemaNode {
  if (typeof schema["$ref"] === "string") return { $ref: schema["$ref"] };
  if (defs[name] !== undefined) throw new Error(`msp-schema: $defs/${name} exists already; rename the type or the method`);
  defs[name] = schema;
  return ref(name);
}

/**
 * Build the schema from types.ts (the generator's run takes seconds).
 *
 * @example
 * ```ts
 * const text = await serializeSchema(buildMspSchema());
 * ```
 */
export function buildMspSchema(): SchemaNode {
  const generated = createGenerator({
    path: TYPES_PATH,
    tsconfig: `${ROOT}tsconfig.json`,
    type: "*",
    expose: "export",
    topRef: true,
    jsDoc: "extended",
    skipTypeCheck: true,
    additionalProperties: false,
  }).createSchema("*");
  const defs = normalize(generated.definitions ?? {}) as Record<string, SchemaNode>;
  const methods: Record<string, SchemaNode> = {};
  // Commands: client → host requests.
  for (const [method, entry] of Object.entries(propertiesOf(defs["CommandMap"], "CommandMap"))) {
    const { params, result } = propertiesOf(entry, `CommandMap["${method}"]`);
    if (params === undefined || result === undefined) throw new Error(`msp-schema: CommandMap["${method}"] needs params and result`);
    methods[method] = {
      kind: "command",
      direction: "clientToHost",
      params: lift(defs, params, `${pascal(method)}Params`),
      result: lift(defs, result, `${pascal(method)}Result`),
    };
  }
  // Notifications: host → client.
  for (const [method, params] of Object.entries(propertiesOf(defs["NotificationParamsMap"], "NotificationParamsMap"))) {
    methods[method] = { kind: "notification", direction: "hostToClient", params: lift(defs, params, `${pascal(method)}Params`) };
  }
  // Host requests: host → client.
  for (const [method, entry] of Object.entries(propertiesOf(defs["HostRequestMap"], "HostRequestMap"))) {
    const { params, result } = propertiesOf(entry, `HostRequestMap["${method}"]`);
    if (params === undefined || result === undefined) throw new Error(`msp-schema: HostRequestMap["${method}"] needs params and result`);
    methods[method] = {
      kind: "hostRequest",
      direction: "hostToClient",
      params: lift(defs, params, `${pascal(method)}Params`),
      result: lift(defs, result, `${pascal(method)}Result`),
    };
  }
  for (const map of ["CommandMap", "NotificationParamsMap", "HostRequestMap"]) delete defs[map];
  flattenLiteralUnions(defs);
  Object.assign(defs, envelopes());
  // The Item union, tagged by kind.
  const item = defs["Item"];
  if (item === undefined || !Array.isArray(item["anyOf"])) throw new Error("msp-schema: Item is not a union in the generated schema");
  item["oneOf"] = item["anyOf"];
  delete item["anyOf"];
  item["type"] = "object";
  item["discriminator"] = { propertyName: "kind" };
  // ItemPatch intersects the message and tool-call fields: where both have a field, the generator
  // keeps one side's description (failureReason's speaks of steering messages only), so the patch's
  // fields carry none; the item types describe them.
  for (const property of Object.values(propertiesOf(defs["ItemPatch"], "ItemPatch"))) delete property["description"];
  // Whole numbers.
  for (const [name, fields] of Object.entries(INTEGER_FIELDS)) {
    const def = defs[name];
    if (def === undefined) throw new Error(`msp-schema: INTEGER_FIELDS names $defs/${name}, which the types do not have`);
    const properties = propertiesOf(def, name);
    for (const [field, minimum] of Object.entries(fields)) {
      const property = properties[field];
      if (property?.["type"] !== "number") throw new Error(`msp-schema: INTEGER_FIELDS names ${name}.${field}, which is not a number in the types`);
      property["type"] = "integer";
      if (minimum !== undefined) property["minimum"] = minimum;
    }
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: SCHEMA_ID,
    title: `MSP ${PROTOCOL_VERSION}`,
    description:
      "The MSP wire: JSON-RPC 2.0 messages of agent sessions (turns, items, tool calls). Generated by scripts/msp-schema.ts from packages/protocol/src/types.ts; docs/protocol.md is the reference. Validate a message against its envelope in $defs, then its params (or result) against x-msp-methods[method].",
    "x-msp-protocolVersion": PROTOCOL_VERSION,
    "x-msp-methods": methods,
    "x-msp-errors": { "-32001": { description: "A refused command (docs/protocol.md, Rejection).", data: ref("RejectionData") } },
    $defs: defs,
  };
}

/** The file's text: keys sorted at every level, laid out by the repository's prettier (so `format:check` agrees). */
export async function serializeSchema(schema: SchemaNode): Promise<string> {
  const options = (await resolveConfig(SCHEMA_PATH)) ?? {};
  return format(JSON.stringify(sortKeys(schema), null, 2), { ...options, parser: "json" });
}

async function main(): Promise<number> {
  const text = await serializeSchema(buildMspSchema());
  if (process.argv.includes("--check")) {
    let committed: string | undefined;
    try {
      committed = readFileSync(SCHEMA_PATH, "utf8");
    } catch {
      committed = undefined;
    }
    if (committed === text) {
      console.log("msp-schema: msp.schema.json matches packages/protocol/src/types.ts");
      return 0;
    }
    console.error(
      committed === undefined
        ? "msp-schema: msp.schema.json is missing; run `npx tsx scripts/msp-schema.ts` and commit it"
        : "msp-schema: msp.schema.json differs from what packages/protocol/src/types.ts generates; run `npx tsx scripts/msp-schema.ts` and commit it",
    );
    return 1;
  }
  writeFileSync(SCHEMA_PATH, text);
  console.log(`msp-schema: wrote msp.schema.json (${Object.keys((JSON.parse(text) as { $defs: object }).$defs).length} definitions)`);
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
