import type { TestServer } from '../helpers/server.js';

// Shared by the library and media detail browser tests: uploads through the API, polling, the video.

/** Uploads bytes with the key (PUT to the delivery path) and answers the new file. */
export async function putFile(t: TestServer, key: string, projectId: string, name: string, bytes: Buffer) {
  const res = await t.call('PUT', `/d/${projectId}/tests/${name}`, { key, raw: bytes });
  if (res.status !== 201) throw new Error(`upload of ${name}: ${res.status} ${res.text}`);
  return res.json.data;
}

/** Polls `check` until it answers true (the page's CSP forbids the string predicates of waitForFunction). */
export async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The parts of a <video> the tests read. */
export interface VideoLike {
  currentTime: number;
  muted: boolean;
  play(): Promise<void>;
  pause(): void;
  textTracks: ArrayLike<{ kind: string; mode: string; activeCues: { length: number } | null }>;
}
