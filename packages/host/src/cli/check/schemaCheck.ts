/**
 * schemaCheck: every message of a scenario's wire, both ways, against msp.schema.json (the SDK
 * package's `@muse-code/sdk/msp.schema.json`, generated from the wire types), with ajv. A
 * notification or request is checked against its method's params; a response against the result
 * (or, for a refusal, the error data) of the request it answers, matched by id on the same wire.
 * Each problem names the line, the method, the JSON path and the schema rule (keyword) that failed.
 * A field the schema does not define is a note, not a problem: MSP's readers ignore unknown
 * fields, so a host may carry its own; a misspelt field reads as absent, and the rule that needs
 * it reports that.
 * Lines the check sent raw on purpose (malformed input, late answers) are the check's, not the
 * SDK's, and are not checked; neither are messages of a method the schema does not define.
 */
import { createRequire } from "node:module";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { WireLine } from "./checkWire.js";

/** What this module reads of msp.schema.json. */
interface MspSchemaFile {
  $id: string;
  "x-msp-methods": Record<string, { kind: "command" | "notification" | "hostRequest"; params: { $ref: string }; result?: { $ref: string } }>;
  "x-msp-errors": Record<string, { data: { $ref: string } }>;
}

/** Most schema errors reported per message: the first ones show what is wrong. */
const MAX_ERRORS_PER_MESSAGE = 3;

/** The schema and its compiled validators, made on first use. */
class MspSchema {
  readonly file: MspSchemaFile;
  readonly #ajv: Ajv2020;
  readonly #compiled = new Map<string, ValidateFunction>();
  /** Where each schema object sits in the file, as a JSON pointer: ajv's own schemaPath is relative to the last `$ref` it followed. */
  readonly #pointers = new Map<object, string>();

  constructor() {
    this.file = createRequire(import.meta.url)("@muse-code/sdk/msp.schema.json") as MspSchemaFile;
    const walk = (node: unknown, pointer: string): void => {
      if (typeof node !== "object" || node === null) return;
      this.#pointers.set(node, pointer);
      for (const [key, value] of Object.entries(node)) walk(value, `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`);
    };
    walk(this.file, "");
    this.#ajv = new Ajv2020({ allErrors: true, discriminator: true, strict: true, verbose: true });
    this.#ajv.addVocabulary(["x-msp-protocolVersion", "x-msp-methods", "x-msp-errors"]);
    this.#ajv.addSchema(this.file as unknown as object);
  }

  /** The validator of a `#/$defs/…` reference of the file. */
  validator(ref: string): ValidateFunction {
    let validate = this.#compiled.get(ref);
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: `${this.file.$id}${ref}` });
      this.#compiled.set(ref, validate);
    }
    return validate;
  }

  /** Where an error's rule is in the file: `#/$defs/TurnUsage/properties/inputTokens/minimum`. */
  ruleAt(error: ErrorObject): string {
    const parent = error.parentSchema === undefined ? undefined : this.#pointers.get(error.parentSchema);
    return parent === undefined ? error.schemaPath : `#${parent}/${error.keyword}`;
  }
}

let schema: MspSchema | undefined;

/** A JSON pointer as a JSONPath: `/params/item/truncated` → `$.params.item.truncated`. */
function jsonPath(pointer: string): string {
  if (pointer === "") return "$";
  return `$${pointer
    .slice(1)
    .split("/")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`))
    .join("")}`;
}

/** One ajv error as a sentence: where, what, and the rule. */
function describeError(error: ErrorObject, base: string, rule: string): string {
  const params = error.params as { additionalProperty?: string; missingProperty?: string };
  const at = jsonPath(`${base}${error.instancePath}`);
  const what =
    error.keyword === "additionalProperties" && params.additionalProperty !== undefined
      ? `has the field ${JSON.stringify(params.additionalProperty)}, which the schema does not define`
      : error.keyword === "required" && params.missingProperty !== undefined
        ? `lacks the required field ${JSON.stringify(params.missingProperty)}`
        : (error.message ?? "does not match");
  return `${at} ${what} (schema rule "${error.keyword}" at msp.schema.json${rule})`;
}

/** One schema finding: its sentence, and whether it is only a field the schema does not define. */
interface SchemaError {
  text: string;
  unknownField: boolean;
}

/** The schema errors of one message's part `value` (at `base`, a JSON pointer into the message) against `ref`. */
function errorsOf(ref: string, value: unknown, base: string): SchemaError[] {
  schema ??= new MspSchema();
  const validate = schema.validator(ref);
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, MAX_ERRORS_PER_MESSAGE).map((error) => ({
    text: describeError(error, base, (schema as MspSchema).ruleAt(error)),
    unknownField: error.keyword === "additionalProperties",
  }));
}

/** What a wire's messages break of the schema: `problems` fail a check; `notes` are fields the schema does not define. */
export interface SchemaFindings {
  problems: string[];
  notes: string[];
}

/** Who sent a line, in the problem's words. */
const sender = (line: WireLine) => (line.dir === "server" ? "the host" : "the client");

/**
 * The schema findings of a wire, each starting `line <n>:`, in wire order. `skip` holds the lines
 * not to check (sent raw by the check).
 *
 * @example
 * ```ts
 * const { problems, notes } = schemaFindings(wire.lines, wire.sentRaw);
 * ```
 */
export function schemaFindings(lines: readonly WireLine[], skip: ReadonlySet<number> = new Set()): SchemaFindings {
  schema ??= new MspSchema();
  const methods = schema.file["x-msp-methods"];
  const errors = schema.file["x-msp-errors"];
  /** The method of each request still unanswered, by its sender and id. */
  const asked = new Map<string, string>();
  const problems: string[] = [];
  const notes: string[] = [];
  for (const line of lines) {
    const message = line.message;
    if (message === undefined || skip.has(line.line)) continue;
    const report = (what: string, found: SchemaError[]) => {
      for (const { text, unknownField } of found) (unknownField ? notes : problems).push(`line ${line.line}: ${what} from ${sender(line)}: ${text}`);
    };
    const method = message["method"];
    if (typeof method === "string") {
      const isRequest = "id" in message;
      report(method, errorsOf(isRequest ? "#/$defs/JsonRpcRequest" : "#/$defs/JsonRpcNotification", message, ""));
      const entry = methods[method];
      if (entry === undefined) continue;
      const sent = entry.kind === "command" ? "client" : "server";
      const expected = entry.kind === "notification" ? "a notification" : "a request";
      if (sent !== line.dir || isRequest !== (entry.kind !== "notification")) {
        problems.push(
          `line ${line.line}: ${method} from ${sender(line)} as ${isRequest ? "a request" : "a notification"}: msp.schema.json's x-msp-methods has it as ${expected} from ${sent === "server" ? "the host" : "the client"} (schema rule "x-msp-methods")`,
        );
        continue;
      }
      if (isRequest) asked.set(`${line.dir} ${JSON.stringify(message["id"])}`, method);
      report(method, errorsOf(entry.params.$ref, message["params"] ?? {}, "/params"));
      continue;
    }
    // A response answers a request of the other side, by id.
    const key = `${line.dir === "server" ? "client" : "server"} ${JSON.stringify(message["id"])}`;
    const answered = asked.get(key);
    asked.delete(key);
    const what = answered === undefined ? "a response" : `the response to ${answered}`;
    if ("error" in message) {
      report(what, errorsOf("#/$defs/JsonRpcFailure", message, ""));
      const error = message["error"] as { code?: unknown; data?: unknown } | null;
      const data = typeof error === "object" && error !== null ? errors[String(error.code)]?.data : undefined;
      if (data !== undefined && answered !== undefined) report(what, errorsOf(data.$ref, (error as { data?: unknown }).data ?? null, "/error/data"));
      continue;
    }
    report(what, errorsOf("#/$defs/JsonRpcSuccess", message, ""));
    const result = answered === undefined ? undefined : methods[answered]?.result;
    if (result !== undefined) report(what, errorsOf(result.$ref, message["result"], "/result"));
  }
  return { problems, notes };
}

/**
 * Every schema finding of a wire as one list, notes included: for text that must match the schema
 * exactly (the docs' examples, the committed transcripts).
 *
 * @example
 * ```ts
 * expect(schemaProblems(transcriptLines)).toEqual([]);
 * ```
 */
export function schemaProblems(lines: readonly WireLine[], skip: ReadonlySet<number> = new Set()): string[] {
  const { problems, notes } = schemaFindings(lines, skip);
  return [...problems, ...notes].sort((a, b) => lineOf(a) - lineOf(b));
}

const lineOf = (text: string) => Number(/^line (\d+):/.exec(text)?.[1] ?? 0);
