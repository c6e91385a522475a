// A scripted ACP agent built on the SDK's agent side. Each prompt: stream a message, announce a
// shell tool call, ask permission, run the command (env AGENT_CMD) with real output streaming,
// then finish. On session/cancel it aborts; with AGENT_LEAK=1 it leaves the child running
// (as Codex does), otherwise it SIGTERMs the child's process group.
import { agent, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';

const cmd = process.env.AGENT_CMD ?? 'echo step-1; sleep 30; echo step-2';
const leak = process.env.AGENT_LEAK === '1';
const ask = process.env.AGENT_ASK !== '0';
const sessions = new Map(); // sessionId -> { abort: AbortController | null }
let n = 0;

const app = agent({ name: 'scripted-shell-agent' })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    authMethods: [],
  }))
  .onRequest(methods.agent.session.new, () => {
    const sessionId = `sess-${++n}`;
    sessions.set(sessionId, { abort: null });
    return { sessionId };
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    process.stderr.write(`[agent] cancel ${params.sessionId}\n`);
    setTimeout(() => process.stderr.write(`[agent] prompt handler signal aborted after cancel: ${globalThis.promptSignal?.aborted}\n`), 50);
    sessions.get(params.sessionId)?.abort?.abort();
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client, signal }) => {
    globalThis.promptSignal = signal;
    const s = sessions.get(params.sessionId);
    const abort = new AbortController();
    s.abort = abort;
    const update = (u) => client.notify(methods.client.session.update, { sessionId: params.sessionId, update: u });
    for (const chunk of ['I will ', 'run the ', 'command.']) {
      await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: chunk } });
    }
    await update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'thinking…' } });
    const toolCallId = `tc-${Date.now()}`;
    await update({ sessionUpdate: 'tool_call', toolCallId, title: cmd, kind: 'execute', status: 'pending', rawInput: { command: cmd } });
    if (ask) {
      const answer = await client.request(methods.client.session.requestPermission, {
        sessionId: params.sessionId,
        toolCall: { toolCallId, title: cmd, kind: 'execute', status: 'pending', rawInput: { command: cmd } },
        options: [
          { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
          { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
          { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
        ],
      });
      process.stderr.write(`[agent] permission answer ${JSON.stringify(answer)}\n`);
      if (answer.outcome.outcome === 'cancelled' || abort.signal.aborted) {
        await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' });
        return { stopReason: 'cancelled' };
      }
      if (answer.outcome.optionId === 'reject') {
        await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'rejected' } }] });
        await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Rejected, stopping.' } });
        return { stopReason: 'end_turn' };
      }
    }
    const child = spawn('bash', ['-c', cmd], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    process.stderr.write(`[agent] spawned pid ${child.pid}\n`);
    await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress', _meta: { pid: child.pid } });
    let out = '';
    const onData = (d) => {
      out += d;
      update({ sessionUpdate: 'tool_call_update', toolCallId, content: [{ type: 'content', content: { type: 'text', text: out } }] });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
    const aborted = new Promise((r) => abort.signal.addEventListener('abort', () => r('aborted'), { once: true }));
    const first = await Promise.race([exited, aborted]);
    if (first === 'aborted') {
      if (!leak) try { process.kill(-child.pid, 'SIGTERM'); } catch {}
      await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' });
      return { stopReason: 'cancelled' };
    }
    await update({ sessionUpdate: 'tool_call_update', toolCallId, status: first.code === 0 ? 'completed' : 'failed' });
    await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: ' Done.' } });
    await update({ sessionUpdate: 'usage_update', used: 1234, size: 200000 });
    return { stopReason: 'end_turn', usage: { totalTokens: 30, inputTokens: 20, outputTokens: 10 } };
  });

const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const conn = app.connect(stream);
await conn.closed;
