// Drives `codex app-server` over stdio JSON-RPC lines against the scripted Responses server.
// Usage: node drive-codex.mjs <scenario>   scenarios: interrupt | approve-accept | approve-interrupt | complete
import { spawn, execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const scenario = process.argv[2] ?? 'interrupt';
const codexBin = process.env.CODEX_BIN;
const port = Number(process.env.MOCK_PORT);
const approval = process.env.APPROVAL ?? 'never';
const sandbox = process.env.SANDBOX ?? 'danger-full-access';
const extraConfig = process.env.EXTRA_CONFIG ?? '';
const home = process.env.HOME_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'codex-home-'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-work-'));
fs.writeFileSync(path.join(home, 'config.toml'), `
model = "mock-model"
model_provider = "mock"
approval_policy = "${approval}"
sandbox_mode = "${sandbox}"
check_for_update_on_startup = false
${extraConfig}

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:${port}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
apps = false
remote_plugin = false
${process.env.FEATURES ?? ''}

[analytics]
enabled = false
`);

const t0 = Date.now();
const stamp = () => String(Date.now() - t0).padStart(6);
const log = (dir, s) => console.log(`${stamp()} ${dir} ${s.length > 3000 ? s.slice(0, 3000) + '…' : s}`);

const child = spawn(codexBin, ['app-server'], {
  cwd: work,
  detached: true, // own process group
  env: { ...process.env, CODEX_HOME: home, MOCK_API_KEY: 'sk-test', HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1,localhost', RUST_LOG: 'warn' },
  stdio: ['pipe', 'pipe', 'pipe'],
});
console.log(`app-server pid ${child.pid} CODEX_HOME ${home} cwd ${work}`);
child.stderr.on('data', (d) => fs.appendFileSync('/tmp/bridge-research/codex-stderr.log', d));

let nextId = 1;
const pending = new Map();
const waiters = [];
const seen = [];
function send(msg) { const s = JSON.stringify(msg); log('->', s); child.stdin.write(s + '\n'); }
function request(method, params) { const id = nextId++; send({ id, method, params }); return new Promise((r) => pending.set(id, r)); }
function waitFor(pred, ms = 20000) {
  const hit = seen.find(pred); if (hit) return Promise.resolve(hit);
  return new Promise((resolve) => { const w = { pred, resolve }; waiters.push(w); setTimeout(() => resolve(null), ms); });
}
const serverRequests = [];
readline.createInterface({ input: child.stdout }).on('line', (line) => {
  log('<-', line);
  let m; try { m = JSON.parse(line); } catch { return; }
  if (m.id !== undefined && !m.method && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); return; }
  if (m.method && m.id !== undefined) serverRequests.push(m);
  seen.push(m);
  for (const w of [...waiters]) if (w.pred(m)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(m); }
});

function psTree() {
  return execSync(`ps -eo pid,ppid,pgid,sid,stat,etimes,args --forest | grep -v ' ps -eo' | awk 'NR==1 || /codex|sleep|bash/' | grep -v awk`, { encoding: 'utf8' });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function procStat(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = st.slice(st.lastIndexOf(')') + 2).split(' ');
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return { pid, state: rest[0], ppid: +rest[1], pgid: +rest[2], sid: +rest[3], start: rest[19], cmd };
  } catch { return null; }
}
function descendants(root) {
  const all = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).map(procStat).filter(Boolean);
  const out = []; const frontier = [root];
  while (frontier.length) { const p = frontier.pop(); for (const q of all) if (q.ppid === p) { out.push(q); frontier.push(q.pid); } }
  return out;
}
globalThis.descendants = descendants; globalThis.procStat = procStat;
const findSleep = () => descendants(child.pid).filter((q) => /sleep/.test(q.cmd)).map((q) => q.pid);

const init = await request('initialize', { clientInfo: { name: 'bridge-research', version: '0.0.0' }, capabilities: { experimentalApi: true } });
send({ method: 'initialized' });
const ts = process.env.THREAD ? await request('thread/resume', { threadId: process.env.THREAD }) : await request('thread/start', { cwd: work });
const threadId = ts.result?.thread?.id;
console.log('THREAD', threadId, 'turns in resume answer', ts.result?.thread?.turns?.length, 'rss of app-server kB', fs.readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
const turn = await request('turn/start', { threadId, input: [{ type: 'text', text: 'run the command', text_elements: [] }] });
const turnId = turn.result?.turn?.id;

if (scenario === 'complete') {
  await waitFor((m) => m.method === 'turn/completed', 60000);
  const pids = findSleep();
  console.log('at turn/completed, descendants', JSON.stringify(descendants(child.pid).map((q) => [q.pid, q.ppid, q.pgid, q.cmd.slice(0, 40)])));
  const bg = await request('thread/backgroundTerminals/list', { threadId });
  globalThis.leftPids = pids;
} else if (scenario === 'interrupt') {
  await waitFor((m) => m.method === 'item/started' && m.params.item.type === 'commandExecution');
  await sleep(1500);
  console.log('--- ps before interrupt\n' + psTree());
  const bg = await request('thread/backgroundTerminals/list', { threadId });
  const pids = findSleep();
  console.log('descendants of app-server', JSON.stringify(descendants(child.pid)));
  const tInt = Date.now();
  await request('turn/interrupt', { threadId, turnId });
  const done = await waitFor((m) => m.method === 'turn/completed');
  console.log(`turn/completed ${done ? Date.now() - tInt : 'never'} ms after interrupt, status ${done?.params?.turn?.status}`);
  await sleep(5000);
  console.log('--- 5s after interrupt: item/completed for command?', seen.some((m) => m.method === 'item/completed' && m.params.item.type === 'commandExecution'));
  console.log('sleep pids alive', pids.filter((p) => fs.existsSync(`/proc/${p}`)));
  console.log(psTree());
  await request('thread/backgroundTerminals/list', { threadId });
  if (process.env.TRY_TERMINATE) {
    const list = await request('thread/backgroundTerminals/list', { threadId });
    for (const t of list.result?.data ?? []) await request('thread/backgroundTerminals/terminate', { threadId, processId: t.processId });
    await sleep(1000);
    console.log('after terminate: sleep pids alive', pids.filter((p) => fs.existsSync(`/proc/${p}`)));
  }
  if (process.env.TRY_CLEAN) {
    await request('thread/backgroundTerminals/clean', { threadId });
    await sleep(1000);
    console.log('after clean: sleep pids alive', pids.filter((p) => fs.existsSync(`/proc/${p}`)));
  }
  globalThis.leftPids = pids;
} else if (scenario === 'spawn') {
  await waitFor((m) => m.method === 'item/started' && m.params.item.type === 'commandExecution', 40000);
  await sleep(1500);
  console.log('descendants', JSON.stringify(descendants(child.pid).map((q) => [q.pid, q.ppid, q.pgid, q.cmd.slice(0, 30)])));
  globalThis.leftPids = findSleep();
  await request('turn/interrupt', { threadId, turnId });
  await waitFor((m) => m.method === 'turn/completed' && m.params.threadId === threadId);
  await sleep(3000);
  console.log('after parent interrupt: sleep alive', globalThis.leftPids.filter((p) => fs.existsSync('/proc/' + p)));
  const ct = seen.find((m) => m.method === 'turn/started' && m.params.threadId !== threadId);
  await request('turn/interrupt', { threadId: ct.params.threadId, turnId: ct.params.turn.id });
  const cd = await waitFor((m) => m.method === 'turn/completed' && m.params.threadId === ct.params.threadId, 5000);
  console.log('child terminal', cd?.params?.turn?.status);
  await sleep(2000);
  console.log('after child interrupt: sleep alive', globalThis.leftPids.filter((p) => fs.existsSync('/proc/' + p)));
  const w = seen.filter((m) => m.method === 'item/completed' && m.params.item.type === 'collabAgentToolCall').map((m) => m.params.item.tool + ':' + m.params.item.status);
  console.log('collab items completed', w);
} else if (scenario === 'steer') {
  await waitFor((m) => m.method === 'item/started' && m.params.item.type === 'commandExecution');
  await request('turn/steer', { threadId, expectedTurnId: turnId, input: [{ type: 'text', text: 'also say hello', text_elements: [] }] });
  await request('turn/steer', { threadId, expectedTurnId: 'not-the-turn', input: [{ type: 'text', text: 'x', text_elements: [] }] });
  await waitFor((m) => m.method === 'turn/completed', 30000);
  await request('turn/steer', { threadId, expectedTurnId: turnId, input: [{ type: 'text', text: 'late', text_elements: [] }] });
  await request('turn/interrupt', { threadId, turnId });
} else if (scenario === 'die') {
  await waitFor((m) => m.method === 'item/started' && m.params.item.type === 'commandExecution');
  await sleep(3000);
  const pids = findSleep();
  console.log('sleep', pids.map(procStat));
  const how = process.env.KILL_SIGNAL ?? 'SIGKILL';
  console.log('--- app-server death by', how);
  if (how === 'EOF') child.stdin.end(); else process.kill(child.pid, how);
  for (let i = 0; i < 6; i++) { await sleep(500); console.log(`+${(i + 1) * 500}ms app-server alive ${fs.existsSync('/proc/' + child.pid) && procStat(child.pid)?.state}`, 'sleep', pids.map((p) => procStat(p)).map((q) => q && `${q.pid} ppid=${q.ppid} pgid=${q.pgid} ${q.state}`)); }
  for (const p of pids) try { process.kill(p, 'SIGKILL'); } catch {}
  process.exit(0);
} else if (scenario.startsWith('approve')) {
  const req = await waitFor((m) => m.method?.endsWith('requestApproval') || m.method === 'execCommandApproval', 30000);
  console.log('approval request:', req ? req.method : 'none');
  if (req && scenario === 'approve-accept') {
    send({ id: req.id, result: { decision: process.env.DECISION ?? 'accept' } });
    await waitFor((m) => m.method === 'turn/completed', 60000);
  } else if (req && scenario === 'approve-interrupt') {
    await request('turn/interrupt', { threadId, turnId });
    await waitFor((m) => m.method === 'turn/completed');
    await sleep(300);
    send({ id: req.id, result: { decision: 'accept' } });
    await sleep(3000);
    console.log('sleep pids after late accept', findSleep());
  }
}
await sleep(500);
console.log('--- signal to app-server pid only', process.env.KILL_SIGNAL ?? 'SIGTERM', child.pid);
try { process.kill(child.pid, process.env.KILL_SIGNAL ?? 'SIGTERM'); } catch {}
await sleep(1500);
console.log('after app-server death, sleep pids alive:', (globalThis.leftPids ?? []).filter((p) => fs.existsSync(`/proc/${p}`)));
for (const p of globalThis.leftPids ?? []) try { const st = fs.readFileSync(`/proc/${p}/stat`, 'utf8'); console.log('orphan stat', st.split(') ')[1].split(' ').slice(0, 4).join(' ')); process.kill(p, 'SIGKILL'); } catch {}
process.exit(0);
