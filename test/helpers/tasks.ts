import type { TestServer } from './server.js';

const FINAL = new Set(['completed', 'failed', 'cancelled']);

/** Polls GET /tasks/{id} until the task reaches one of `statuses` (default: any final status). */
export async function waitForTask(
  t: TestServer,
  key: string,
  id: string,
  statuses: string[] = [...FINAL],
  timeoutMs = 60_000,
  pollMs = 25,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.call('GET', `/tasks/${id}`, { key });
    if (res.status !== 200) throw new Error(`GET /tasks/${id} answered ${res.status}: ${res.text}`);
    if (statuses.includes(res.json.data.status)) return res.json.data;
    if (Date.now() > deadline) throw new Error(`task ${id} still ${res.json.data.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
