/**
 * Helpers for the reference host's fault tests (real `muse-host` child processes): models written
 * on the fly, waiting for a host to be serving or to exit, and reading a process's descriptors and
 * peak RSS from /proc.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { HostProcess, WireMessage } from "../host/hostProcess.js";

/** Writes a scripted model with one turn of one step running `command` in the shell tool; returns its path. */
export function shellModel(dir: string, name: string, command: string, text = "Done."): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ turns: [{ steps: [{ toolCalls: [{ tool: "shell", args: { command } }] }, { text }] }] }));
  return path;
}

/** Resolves once `host` says it is serving; rejects (with its stderr) if it exits first or takes longer than `timeoutMs`. */
export async function serving(host: HostProcess, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void host.exited.then((e) => (exited = e));
  while (!/serving on stdio/.test(host.stderr)) {
    if (exited !== undefined) throw new Error(`host exited ${JSON.stringify(exited)} before serving; stderr:\n${host.stderr}`);
    if (Date.now() - started > timeoutMs) throw new Error(`host not serving after ${timeoutMs} ms; stderr:\n${host.stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits (bounded) for `host` to exit. */
export async function exitOf(host: HostProcess, timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`host did not exit within ${timeoutMs} ms; stderr:\n${host.stderr}`)), timeoutMs);
  });
  try {
    return await Promise.race([host.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The sessionId of a new session. */
export async function createSession(host: HostProcess, timeoutMs = 5_000): Promise<string> {
  const answer = await host.request("session/create", {}, timeoutMs);
  const sessionId = answer.result?.["sessionId"];
  if (typeof sessionId !== "string") throw new Error(`session/create failed: ${JSON.stringify(answer)}`);
  return sessionId;
}

/** Matches the `turn/completed` of `turnId`. */
export const completedOf =
  (turnId: string) =>
  (m: WireMessage): boolean =>
    m.method === "turn/completed" && m.params?.["turnId"] === turnId;

/** How many descriptors process `pid` holds now. */
export function descriptorsOf(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Process `pid`'s peak resident set size so far (VmHWM). @unit bytes */
export function peakRssOf(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (match === null) throw new Error(`no VmHWM for ${pid}`);
  return Number(match[1]) * 1024;
}

/** The notifications of the session/resume answered as `id`'s replay, in wire order (everything after the response). */
export function replayAfter(host: HostProcess, id: number): WireMessage[] {
  const at = host.wire.findIndex((m) => m.id === id && m.method === undefined);
  return host.wire.slice(at + 1).filter((m) => m.method !== undefined && m.id === undefined);
}
