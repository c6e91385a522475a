// Scripted Responses-API SSE server on 127.0.0.1 for driving `codex app-server`.
// Request 1 of each turn answers with a function call running CMD (env MOCK_CMD, default "sleep 30");
// any request that already carries a function_call_output answers with a final message.
import http from 'node:http';
import fs from 'node:fs';

const port = Number(process.env.MOCK_PORT ?? 0);
const cmd = process.env.MOCK_CMD ?? 'sleep 30';
const logFile = process.env.MOCK_LOG ?? '/tmp/bridge-research/mock-requests.log';
let n = 0;

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  res.end();
}

const usage = { input_tokens: 11, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 18 };

function functionCallEvents(id, tools) {
  const names = tools.map((t) => t.name ?? t.type);
  let name, args;
  if (names.includes('exec_command')) { name = 'exec_command'; args = { cmd, login: process.env.MOCK_LOGIN === '1' }; }
  else if (names.includes('shell_command')) { name = 'shell_command'; args = { command: cmd }; }
  else { name = 'shell'; args = { command: ['bash', '-lc', cmd] }; }
  if (process.env.MOCK_ESCALATE) args.sandbox_permissions = 'require_escalated', args.justification = 'scripted test wants approval';
  const callId = `call_${id}`;
  const item = { type: 'function_call', id: `fc_${id}`, call_id: callId, name, arguments: JSON.stringify(args), status: 'completed' };
  return [
    { type: 'response.created', response: { id: `resp_${id}` } },
    { type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '' } },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: { id: `resp_${id}`, usage } },
  ];
}

function messageEvents(id, text) {
  const msgId = `msg_${id}`;
  const item = { type: 'message', role: 'assistant', id: msgId, status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  const ev = [
    { type: 'response.created', response: { id: `resp_${id}` } },
    { type: 'response.output_item.added', output_index: 0, item: { ...item, content: [] } },
  ];
  for (const chunk of text.match(/.{1,8}/g)) ev.push({ type: 'response.output_text.delta', item_id: msgId, output_index: 0, content_index: 0, delta: chunk });
  ev.push({ type: 'response.output_item.done', output_index: 0, item });
  ev.push({ type: 'response.completed', response: { id: `resp_${id}`, usage } });
  return ev;
}

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    n += 1;
    let json = {};
    try { json = JSON.parse(body); } catch {}
    const input = Array.isArray(json.input) ? json.input : [];
    const hasOutput = input.some((i) => i.type === 'function_call_output');
    const tools = Array.isArray(json.tools) ? json.tools : [];
    fs.appendFileSync(logFile, JSON.stringify({ n, method: req.method, url: req.url, model: json.model, tools: tools.map((t) => t.name ?? t.type), inputTypes: input.map((i) => i.type), hasOutput }) + '\n');
    if (tools.length && !fs.existsSync(logFile + '.tools.json')) fs.writeFileSync(logFile + '.tools.json', JSON.stringify(json.tools, null, 1));
    if (req.method !== 'POST' || !req.url.endsWith('/responses')) { res.writeHead(404); res.end(); return; }
    const text = JSON.stringify(input.filter((i) => i.type === 'message'));
    if (process.env.MOCK_SPAWN && !text.includes('CHILD-TASK') && !hasOutput) {
      const item = { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: JSON.stringify({ message: 'CHILD-TASK: run the command' }), status: 'completed' };
      sse(res, [{ type: 'response.created', response: { id: `resp_${n}` } }, { type: 'response.output_item.done', output_index: 0, item }, { type: 'response.completed', response: { id: `resp_${n}`, usage } }]);
      return;
    }
    if (process.env.MOCK_SPAWN && !text.includes('CHILD-TASK') && hasOutput && input.filter((i) => i.type === 'function_call').length === 1) {
      const out = input.filter((i) => i.type === 'function_call_output').map((i) => i.output);
      const m = JSON.stringify(out).match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
      const item = { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'wait_agent', namespace: 'multi_agent_v1', arguments: JSON.stringify({ targets: m ? [m[0]] : [], timeout_ms: 60000 }), status: 'completed' };
      fs.appendFileSync(logFile, 'spawn output: ' + JSON.stringify(out).slice(0, 400) + '\n');
      sse(res, [{ type: 'response.created', response: { id: `resp_${n}` } }, { type: 'response.output_item.done', output_index: 0, item }, { type: 'response.completed', response: { id: `resp_${n}`, usage } }]);
      return;
    }
    sse(res, hasOutput ? messageEvents(n, 'The command finished; all done.') : functionCallEvents(n, tools));
  });
});
server.listen(port, '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
