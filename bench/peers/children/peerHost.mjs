#!/usr/bin/env node
/**
 * Bench child for the peer rows: a minimal MCP server, ACP agent or MSP host over NDJSON stdio, no
 * library. It answers the handshake (`initialize`), then either floods N ~800-byte notifications of its
 * dialect (`notifications/message` for MCP, `session/update` agent_message_chunk for ACP), each
 * carrying its index and as long as an average MSP flood notification (~895 bytes), in the same 64-message chunks with backpressure as bench/children/flood.mjs,
 * or (N = 0) echoes: every request gets its answer at once, by the same code for every dialect
 * (`{}`; MSP's `{ status: "accepted", commandId }`), so the round-trip rows of the floor, the SDK
 * and its peers all wait on the same child. argv: dialect ("mcp" | "acp" | "msp"), N (MSP: 0), and
 * optionally the bytes of each notification (the delta rows size them as their MSP flood's mean).
 */
const dialect = process.argv[2] ?? "mcp";
const n = Number(process.argv[3] ?? 0);
const CHUNK_MESSAGES = 64;
/** Text padding: each notification is as long as an average one of the MSP flood (~895 bytes). */
const bytes = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const pad = "lorem ipsum dolor sit amet, ".repeat(Math.ceil((bytes ?? 900) / 28) + 1);

const mcpOf = (i, text) =>
  `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":{"seq":${i + 1},"text":"${text}"}}}`;
const acpOf = (i, text) =>
  `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"0198f0aa-1111-7000-8000-0000000000aa","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"${text}"},"_meta":{"seq":${i + 1}}}}}`;
/** The text's length that makes a notification `bytes` long (with a 6-digit seq), or the default one. */
const textLength = (of, fallback) => (bytes === undefined ? fallback : Math.max(0, bytes - of(100_000, "").length));
const mcpText = pad.slice(0, textLength(mcpOf, 775));
const acpText = pad.slice(0, textLength(acpOf, 687));

function notification(i) {
  return dialect === "mcp" ? mcpOf(i, mcpText) : acpOf(i, acpText);
}

function flood() {
  const chunks = [];
  for (let i = 0; i < n; i += CHUNK_MESSAGES) {
    let text = "";
    for (let j = i; j < Math.min(n, i + CHUNK_MESSAGES); j++) text += `${notification(j)}\n`;
    chunks.push(Buffer.from(text));
  }
  let at = 0;
  const pump = () => {
    while (at < chunks.length) {
      const ok = process.stdout.write(chunks[at++]);
      if (!ok) return void process.stdout.once("drain", pump);
    }
  };
  pump();
}

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

function answer(message) {
  if (message.method === "initialize") {
    const result =
      dialect === "mcp"
        ? { protocolVersion: message.params.protocolVersion, capabilities: { logging: {} }, serverInfo: { name: "bench-peer", version: "1.0.0" } }
        : { protocolVersion: message.params.protocolVersion, agentCapabilities: {}, authMethods: [] };
    send({ jsonrpc: "2.0", id: message.id, result });
    // ACP's client has nothing more to say after initialize: the flood starts now.
    if (dialect === "acp" && n > 0) flood();
    return;
  }
  // MCP's client confirms the handshake with notifications/initialized: the flood starts then.
  if (dialect === "mcp" && message.method === "notifications/initialized" && n > 0) return flood();
  if (message.id !== undefined && message.method !== undefined) {
    const result = dialect === "msp" ? { status: "accepted", commandId: message.params?.commandId ?? null } : {};
    send({ jsonrpc: "2.0", id: message.id, result });
  }
}

let rest = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (text) => {
  rest += text;
  let nl = rest.indexOf("\n");
  while (nl >= 0) {
    const line = rest.slice(0, nl);
    rest = rest.slice(nl + 1);
    if (line.trim() !== "") answer(JSON.parse(line));
    nl = rest.indexOf("\n");
  }
});
process.stdin.on("end", () => process.exit(0));
