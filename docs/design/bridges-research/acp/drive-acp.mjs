// Drives an ACP agent over stdio with the SDK's client side (client() / connectWith).
// Usage: node drive-acp.mjs <scenario> -- CMD ARGS...
// scenarios: approve | reject | cancel-running | cancel-asking
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { Readable, Writable } from 'node:stream';

const dd = process.argv.indexOf('--');
const scenario = process.argv[2];
const [cmd, ...args] = process.argv.slice(dd + 1);
const t0 = Date.now();
const log = (...a) => console.log(String(Date.now() - t0).padStart(6), ...a);
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'], detached: true, env: process.env });
log('agent pid', child.pid);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Tee the raw wire so the message shapes can be read.
const wire = fs.createWriteStream(`/tmp/bridge-research/acp/wire-${scenario}.jsonl`);
const inbound = Readable.toWeb(child.stdout).pipeThrough(new TransformStream({ transform(c, ctl) { wire.write('<- ' + Buffer.from(c).toString()); ctl.enqueue(c); } }));
const outboundNode = Writable.toWeb(child.stdin);
const outbound = new TransformStream({ transform(c, ctl) { wire.write('-> ' + Buffer.from(c).toString()); ctl.enqueue(c); } });
outbound.readable.pipeTo(outboundNode);

let permissionResolve = null;
const permissionAsked = new Promise((r) => (permissionResolve = r));
let toolPid = null;
const app = client({ name: 'bridge-research' })
  .onNotification(methods.client.session.update, ({ params }) => {
    const u = params.update;
    if (u._meta?.pid) toolPid = u._meta.pid;
    log('update', u.sessionUpdate, JSON.stringify(u).slice(0, 200));
  })
  .onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
    log('permission asked', JSON.stringify(params.options.map((o) => o.kind)));
    const pick = (kind) => ({ outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === kind).optionId } });
    log('permission request', JSON.stringify(params).slice(0, 700));
    if (scenario === 'approve' || scenario === 'cancel-running') return pick('allow_once');
    if (scenario === 'reject') return pick('reject_once');
    // cancel-asking: hold the question open until the bridge-side cancel answers it.
    return await new Promise((resolve) => permissionResolve(resolve));
  });

await app.connectWith(ndJsonStream(outbound.writable, inbound), async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: process.env.CLIENT_TERMINAL === '1' } });
  log('initialize ->', JSON.stringify(init).slice(0, 300));
  const s = await ctx.request(methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
  log('session/new ->', JSON.stringify(s).slice(0, 300));
  if (process.env.SET_MODE) log('set_mode ->', JSON.stringify(await ctx.request(methods.agent.session.setMode, { sessionId: s.sessionId, modeId: process.env.SET_MODE })));
  const prompt = ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: 'text', text: 'run the command' }] });
  if (scenario === 'cancel-running') {
    await sleep(Number(process.env.CANCEL_AFTER_MS ?? 2500));
    log('-> session/cancel; tool pid', toolPid);
    await ctx.notify(methods.agent.session.cancel, { sessionId: s.sessionId });
  } else if (scenario === 'cancel-asking') {
    const answer = await permissionAsked;
    log('-> session/cancel while asking');
    await ctx.notify(methods.agent.session.cancel, { sessionId: s.sessionId });
    answer({ outcome: { outcome: 'cancelled' } }); // the client's duty under ACP
  }
  const res = await Promise.race([prompt, sleep(Number(process.env.PROMPT_WAIT_MS ?? 40000)).then(() => 'timeout')]);
  log('session/prompt ->', JSON.stringify(res));
  await sleep(1000);
  if (toolPid) log('tool pid', toolPid, 'alive after terminal:', fs.existsSync(`/proc/${toolPid}`));
  const tree = [];
  for (const d of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try { const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); const r = st.slice(st.lastIndexOf(')') + 2).split(' '); tree.push({ pid: +d, ppid: +r[1], pgid: +r[2] }); } catch {}
  }
  const desc = []; const fr = [child.pid];
  while (fr.length) { const p = fr.pop(); for (const q of tree) if (q.ppid === p) { desc.push(q); fr.push(q.pid); } }
  log('descendants of agent', JSON.stringify(desc));
  if (toolPid) try { process.kill(-toolPid, 'SIGKILL'); } catch {}
});
child.kill('SIGTERM');
process.exit(0);
