// Scripted Anthropic Messages API (SSE) on 127.0.0.1 for driving Claude Code through its ACP adapter.
// A request whose tools include Bash and whose last user message has no tool_result gets a Bash
// tool_use running MOCK_CMD; everything else gets a short text answer.
import http from 'node:http';
import fs from 'node:fs';

const port = Number(process.env.MOCK_PORT ?? 0);
const cmd = process.env.MOCK_CMD ?? 'echo step-1; sleep 30; echo step-2';
const logFile = process.env.MOCK_LOG ?? '/tmp/bridge-research/mock-anthropic.log';
let n = 0;

function send(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  res.end();
}
const usage = { input_tokens: 21, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
function start(id, model) {
  return { type: 'message_start', message: { id: `msg_${id}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } };
}

http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    n += 1;
    let j = {};
    try { j = JSON.parse(body); } catch {}
    const tools = (j.tools ?? []).map((t) => t.name);
    const msgs = j.messages ?? [];
    const last = msgs[msgs.length - 1];
    const lastHasResult = Array.isArray(last?.content) && last.content.some((c) => c.type === 'tool_result');
    fs.appendFileSync(logFile, JSON.stringify({ n, url: req.url, model: j.model, stream: j.stream, tools: tools.slice(0, 30), nmsgs: msgs.length, lastHasResult }) + '\n');
    if (!req.url.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    const model = j.model ?? 'claude-mock';
    if (!j.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `msg_${n}`, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage }));
      return;
    }
    if (tools.includes('Bash') && !lastHasResult) {
      const input = JSON.stringify({ command: cmd, description: 'scripted command' });
      send(res, [
        start(n, model),
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Running it now.' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: `toolu_${n}`, name: 'Bash', input: {} } },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: input } },
        { type: 'content_block_stop', index: 1 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
        { type: 'message_stop' },
      ]);
    } else {
      send(res, [
        start(n, model),
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'All done.' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } },
        { type: 'message_stop' },
      ]);
    }
  });
}).listen(port, '127.0.0.1', function () { console.log('listening', this.address().port); });
