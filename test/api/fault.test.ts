import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startS3, type LocalS3 } from '../helpers/s3.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { spawnWorker, stopWorker } from '../helpers/workers.js';

// The scale-out fault test: PostgreSQL + S3, one API process and three worker processes,
// 60 tasks of mixed kinds; one worker is SIGKILLed mid-task and another started.

const ADMIN = process.env.MEDIAD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = `mediad_fault_${process.pid}`;

let pgUp = false;
let s3: LocalS3;
let origin: Origin;
let t: TestServer;
const workers: ChildProcess[] = [];
let s3Env: Record<string, string>;

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  await c.query(sql);
  await c.end();
}

before(async () => {
  try {
    await admin(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin(`CREATE DATABASE ${DB}`);
    pgUp = true;
  } catch {
    return;
  }
  s3 = await startS3('mediad-fault');
  origin = await startOrigin();
  const url = new URL(ADMIN);
  url.pathname = `/${DB}`;
  s3Env = {
    MEDIAD_STORAGE_URL: `s3://${s3.bucket}/fault`,
    MEDIAD_S3_ENDPOINT: s3.endpoint,
    MEDIAD_S3_FORCE_PATH_STYLE: 'true',
  };
  t = await startTestServer({
    ...s3Env,
    MEDIAD_DATABASE_URL: url.toString(),
    MEDIAD_ALLOWED_URL_HOSTS: origin.host,
    MEDIAD_WORKER_CONCURRENCY: '0',
  });
});

after(async () => {
  if (!pgUp) return;
  for (const w of workers) await stopWorker(w, 'SIGKILL');
  await t.stop();
  await origin.close();
  await s3.close();
  await admin(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => undefined);
});

async function allKeys(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.client.send(
      new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) keys.push(o.Key!);
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

describe('scale-out fault test', () => {
  it('PostgreSQL + S3, three workers, one SIGKILLed: 60 mixed tasks complete exactly once', async (ctx) => {
    if (!pgUp) return ctx.skip('PostgreSQL is not reachable on 127.0.0.1:5432');
    const { key, project_id } = await t.key('fault', 'main');
    const video = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-mp4') } })).json.data;
    const image = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-jpeg') } })).json
      .data;
    const bodies: Record<string, unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      const n = i % 4;
      if (n === 0) bodies.push({ kind: 'image', file_id: image.id, width: 40 + i, format: 'webp' });
      if (n === 1) bodies.push({ kind: 'video', file_id: video.id, width: 96 + 2 * i, preset: 'ultrafast' });
      if (n === 2) bodies.push({ kind: 'audio', file_id: video.id, format: i % 8 === 2 ? 'mp3' : 'ogg' });
      if (n === 3) bodies.push({ kind: 'thumbnails', file_id: video.id, count: 4, width: 40 });
    }
    const ids: string[] = [];
    for (const body of bodies) ids.push((await t.call('POST', '/tasks', { key, body })).json.data.id);

    for (let i = 0; i < 3; i++) workers.push(spawnWorker(t, s3Env));
    const victim = workers[0]!;
    const db = t.server.runtime.deps.db;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const mine = await db
        .selectFrom('tasks')
        .select('id')
        .where('status', '=', 'processing')
        .where('lease_owner', 'like', `%:${victim.pid}:%`)
        .execute();
      if (mine.length > 0) break;
      assert.ok(Date.now() < deadline, 'the first worker took a task');
      await new Promise((r) => setTimeout(r, 20));
    }
    await stopWorker(victim, 'SIGKILL');
    workers.push(spawnWorker(t, s3Env));

    const until = Date.now() + 240_000;
    let rows;
    for (;;) {
      rows = await db
        .selectFrom('tasks')
        .select(['id', 'status', 'attempts', 'output_file_id', 'error'])
        .where('id', 'in', ids)
        .execute();
      if (rows.every((r) => ['completed', 'failed', 'cancelled'].includes(r.status))) break;
      assert.ok(
        Date.now() < until,
        `still running: ${rows.filter((r) => !['completed', 'failed'].includes(r.status)).length}`,
      );
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const r of rows) assert.equal(r.status, 'completed', `${r.id}: ${r.error}`);
    assert.ok(
      rows.some((r) => r.attempts > 1),
      'the killed worker’s tasks ran again',
    );
    assert.equal(new Set(rows.map((r) => r.output_file_id)).size, 60, 'one output per task');

    const files = await db
      .selectFrom('files')
      .select(['id', 'blob_key'])
      .where('project_id', '=', project_id)
      .execute();
    assert.equal(
      files.length,
      2 + 60 + 15,
      'inputs, one output per task and one sprite per thumbnails task — nothing duplicated',
    );
    const blobs = await allKeys(`fault/projects/${project_id}/`);
    assert.deepEqual(
      blobs.sort(),
      files.map((f) => `fault/${f.blob_key}`).sort(),
      'every blob has its row and every row its blob',
    );
  });
});
