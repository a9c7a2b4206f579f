// Automation and webhook latency (issue: automations, workflows, webhooks), 200 runs each:
//   POST /files 201 -> the automation's first step `processing` (its `started` timestamp)
//   task.completed (the task's `finished`) -> its webhook request arriving at a loopback receiver
// Same machine, same clock. Run: npm run bench:automations (results in bench/results/automations.json)
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fixture } from '../test/helpers/fixtures.js';
import { api, median, pct, startMediad, upload } from './child.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 200);

// A loopback origin for the files, and a receiver that notes when each webhook arrives.
const png = await fs.readFile(await fixture('image-png'));
const arrivals = new Map<string, number>();
const server = http.createServer((req, res) => {
  if (req.method === 'GET')
    return void res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
  const at = Date.now();
  let body = '';
  req
    .on('data', (c) => (body += c))
    .on('end', () => {
      arrivals.set(JSON.parse(body).id, at);
      res.writeHead(200).end();
    });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
const m = await startMediad({ MEDIAD_ALLOWED_URL_HOSTS: host });

try {
  await api(m, 'POST', '/automations', {
    trigger: { kind: 'event', event: 'media.created' },
    workflow: [{ kind: 'image', width: 16, ref: 'tiny' }],
  });
  const toStep: number[] = [];
  for (let i = 0; i < RUNS + 5; i++) {
    const file = await api(m, 'POST', '/files', { url: `http://${host}/img-${i}.png` });
    const created = Date.now();
    let step: any;
    while (!step?.started) {
      const tasks = (await api(m, 'GET', '/tasks?kind=image&limit=5')) as any[];
      step = tasks.find((x) => x.input?.id === file.id);
      if (!step?.started) await new Promise((r) => setTimeout(r, 2));
    }
    if (i >= 5) toStep.push(Date.parse(step.started) - created);
  }

  const input = await upload(m, await fixture('image-png'), 'hook.png');
  const toHook: number[] = [];
  for (let i = 0; i < RUNS + 5; i++) {
    const task = await api(m, 'POST', '/tasks', {
      kind: 'image',
      file_id: input.id,
      width: 8,
      webhook_url: `http://${host}/hook`,
    });
    while (!arrivals.has(task.id)) await new Promise((r) => setTimeout(r, 2));
    const done = await api(m, 'GET', `/tasks/${task.id}`);
    if (i >= 5) toHook.push(arrivals.get(task.id)! - Date.parse(done.finished));
  }

  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.availableParallelism(),
    runs: RUNS,
    fileToFirstStep: { p50Ms: pct(toStep, 50), p99Ms: pct(toStep, 99), medianMs: median(toStep), targetP50Ms: 50 },
    completedToWebhook: { p50Ms: pct(toHook, 50), p99Ms: pct(toHook, 99), medianMs: median(toHook), targetP50Ms: 50 },
  };
  await fs.mkdir('bench/results', { recursive: true });
  await fs.writeFile('bench/results/automations.json', `${JSON.stringify(results, null, 2)}\n`);
  const line = (name: string, r: { p50Ms: number; p99Ms: number }) =>
    `  ${name}: p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms (target p50 < 50 ms) ${r.p50Ms < 50 ? 'PASS' : 'FAIL'}`;
  console.log(`\nautomation and webhook latency over ${RUNS} runs`);
  console.log(line('POST /files 201 -> first step processing', results.fileToFirstStep));
  console.log(line('task.completed -> webhook at the receiver', results.completedToWebhook));
} finally {
  m.child.kill('SIGTERM');
  server.close();
  await fs.rm(m.dataDir, { recursive: true, force: true }).catch(() => undefined);
}
