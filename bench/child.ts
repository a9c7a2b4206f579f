// Shared by the task and automation benchmarks: mediad as a child process on loopback, and a small client.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { freePort, mediadCommand, mediadEnv } from './lib.js';

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
export const ms = (a: string, b: string) => Date.parse(b) - Date.parse(a);

export async function startMediad(extraEnv: Record<string, string> = {}) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-bench-tasks-'));
  const port = await freePort();
  const env = mediadEnv(dataDir, port, extraEnv);
  // The built command through its #! line, as users run it (not the sources through tsx).
  const cli = await mediadCommand();
  const key = JSON.parse(
    execFileSync(cli, ['keys', 'create', '--org', 'bench', '--project', 'tasks', '--json'], { env, encoding: 'utf8' }),
  ).key as string;
  const child = spawn(cli, ['serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `https://localhost:${port}`;
  for (let i = 0; ; i++) {
    try {
      const ca = await fs.readFile(path.join(dataDir, 'tls', 'ca.crt'), 'utf8');
      // Idle sockets are dropped well before the server's 5 s keep-alive ends, so a request after a
      // long raw-ffmpeg run never races the server closing the connection ("other side closed").
      const agent = new Agent({
        connect: { ca, servername: 'localhost' },
        keepAliveTimeout: 1000,
        keepAliveMaxTimeout: 1000,
      });
      const res = await request(`${base}/health`, { dispatcher: agent });
      await res.body.dump();
      if (res.statusCode === 200) return { dataDir, base, key, agent, child };
    } catch {
      if (i > 300) throw new Error('mediad did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export type Mediad = Awaited<ReturnType<typeof startMediad>>;
/** What the client helpers need: a server started here or by bench/lib.ts' startMediad. */
export type Client = Pick<Mediad, 'base' | 'key' | 'agent'>;

export async function api(m: Client, method: 'GET' | 'POST', p: string, body?: unknown): Promise<any> {
  const send = () =>
    request(`${m.base}${p}`, {
      method,
      dispatcher: m.agent,
      headers: { authorization: `Bearer ${m.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  // A keep-alive connection the server closed while idle (during a long seed) fails once; a GET may simply be sent again.
  const res = await send().catch((err: { code?: string }) => {
    if (method === 'GET' && err.code === 'UND_ERR_SOCKET') return send();
    throw err;
  });
  const json = (await res.body.json()) as any;
  if (res.statusCode >= 400) throw new Error(`${method} ${p}: ${res.statusCode} ${JSON.stringify(json.error)}`);
  return json.data;
}

export async function listMeta(m: Mediad, p: string): Promise<any> {
  const res = await request(`${m.base}${p}`, { dispatcher: m.agent, headers: { authorization: `Bearer ${m.key}` } });
  return ((await res.body.json()) as any).meta;
}

/**
 * Polls a task until it ends. Durations come from the task's own timestamps, so polling faster
 * buys no precision: it only takes CPU from the work being measured (on 2 cores, a 5 ms poll
 * made a video encode ~10% slower). Long tasks should poll slowly.
 */
export async function waitDone(m: Mediad, id: string, pollMs = 20): Promise<any> {
  for (;;) {
    const t = await api(m, 'GET', `/tasks/${id}`);
    if (['completed', 'failed', 'cancelled'].includes(t.status)) {
      if (t.status !== 'completed') throw new Error(`task ${id} ${t.status}: ${JSON.stringify(t.error)}`);
      return t;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** The input is uploaded once with a key-authenticated PUT, straight from the fixture file. */
export async function upload(m: Client, file: string, name: string): Promise<any> {
  const project = (await api(m, 'GET', '/project')).id as string;
  const res = await request(`${m.base}/d/${project}/bench/${name}`, {
    method: 'PUT',
    dispatcher: m.agent,
    headers: { authorization: `Bearer ${m.key}` },
    body: await fs.readFile(file),
  });
  const json = (await res.body.json()) as any;
  if (res.statusCode !== 201) throw new Error(`upload: ${res.statusCode} ${JSON.stringify(json.error)}`);
  return json.data;
}

/** CPU time (ms) of a process and its waited-for children (FFmpeg) so far: utime + stime + cutime + cstime. */
export async function processCpuMs(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces: state is field 3, utime field 14.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/**
 * The mean of each phase of the completed tasks of `kind` (mediad_task_phase_seconds from GET /metrics),
 * in ms, as sums and counts: the difference of two readings gives the phases of the tasks in between.
 */
export async function taskPhases(m: Mediad, kind: string): Promise<Record<string, { sum: number; count: number }>> {
  const res = await request(`${m.base}/metrics`, { dispatcher: m.agent });
  const text = await res.body.text();
  const out: Record<string, { sum: number; count: number }> = {};
  const re = /^mediad_task_phase_seconds_(sum|count)\{kind="([^"]+)",phase="([^"]+)"\} (\S+)$/gm;
  for (const [, what, k, phase, value] of text.matchAll(re)) {
    if (k !== kind) continue;
    const p = (out[phase!] ??= { sum: 0, count: 0 });
    if (what === 'sum') p.sum = Number(value) * 1000;
    else p.count = Number(value);
  }
  return out;
}

/** Mean ms per phase between two readings of taskPhases. */
export function phaseMeans(
  before: Record<string, { sum: number; count: number }>,
  after: Record<string, { sum: number; count: number }>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [phase, a] of Object.entries(after)) {
    const b = before[phase] ?? { sum: 0, count: 0 };
    if (a.count > b.count) out[phase] = Number(((a.sum - b.sum) / (a.count - b.count)).toFixed(2));
  }
  return out;
}
