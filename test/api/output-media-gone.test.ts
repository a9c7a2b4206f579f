import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { transact } from '../../src/db/transact.js';
import { AppError } from '../../src/errors.js';
import { stageOutputs, type OutputFile, type Staged } from '../../src/services/media/file-store.js';
import { fixture } from '../helpers/fixtures.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// A task's outputs go into its input's media. When that media is deleted while the task runs, the
// output's rows are refused (the files' foreign key, no separate read of the media) as not_found,
// and what was stored for them is removed with its journal entries; an output whose path is taken
// meanwhile is file_conflict. The rows are written with the transaction's last writes. Both databases.

let t: TestServer;
let origin: Origin;
let key: string;
let projectId: string;

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host });
  ({ key, project_id: projectId } = await t.key('outputs', 'main'));
});
after(async () => {
  await t.stop();
  await origin.close();
});

async function newMedia(): Promise<string> {
  const res = await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } });
  assert.equal(res.status, 201, res.text);
  return res.json.data.media_id as string;
}

/** An output as a kind leaves it in its scratch directory. */
async function output(): Promise<OutputFile> {
  const dir = await fs.mkdtemp(path.join(t.dataDir, 'out-'));
  const file = path.join(dir, 'output.png');
  await fs.copyFile(await fixture('image-png'), file);
  return {
    path: file,
    facts: { kind: 'image', format: 'png', extension: 'png', mime: 'image/png', width: 64, height: 48 },
    folder: '',
    ref: null,
  };
}

const deps = () => t.server.runtime.deps;
const journal = () => deps().db.selectFrom('blob_journal').select('blob_key').execute();

/** As the worker ends a task (workers/outcome.ts): the rows' transaction fails, abandon() says why. */
async function refusal(staged: Staged<unknown>): Promise<AppError> {
  const failed: unknown = await transact(deps().db, (trx) => staged.insert(trx)).then(
    () => assert.fail('the rows were inserted'),
    (e: unknown) => e,
  );
  const err = await staged.abandon(failed);
  assert.ok(err instanceof AppError, String(err));
  return err;
}

describe('a task output whose media is gone', () => {
  it('is stored in its media while the media exists, its journal entry settled in the same commit', async () => {
    const mediaId = await newMedia();
    const staged = await stageOutputs(deps(), { projectId }, mediaId, [await output()]);
    assert.equal((await journal()).length, 1, 'the put is announced before the rows');
    const [file] = await transact(deps().db, (trx) => staged.insert(trx));
    staged.committed();
    assert.equal(file!.media_id, mediaId);
    assert.deepEqual(await journal(), []);
    const got = await t.call('GET', `/files/${file!.id}`, { key });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.data.media_id, mediaId);
  });

  it('is refused as not_found when the media was deleted meanwhile, and leaves no bytes and no entry', async () => {
    const mediaId = await newMedia();
    const staged = await stageOutputs(deps(), { projectId }, mediaId, [await output()]);
    const [entry] = await journal();
    assert.ok(entry, 'the put is announced');
    assert.ok(await deps().blobs.stat(entry.blob_key), 'the bytes are stored before the rows');
    const del = await t.call('DELETE', `/media/${mediaId}`, { key });
    assert.equal(del.status, 200, del.text);

    const err = await refusal(staged);
    assert.equal(err.code, 'not_found');
    assert.match(err.message, new RegExp(mediaId));
    assert.equal(await deps().blobs.stat(entry.blob_key), null, 'the stored bytes are removed');
    assert.deepEqual(await journal(), []);
    const files = await deps().db.selectFrom('files').select('id').where('media_id', '=', mediaId).execute();
    assert.deepEqual(files, []);
  });

  it('is refused as file_conflict when its folder and filename were taken meanwhile', async () => {
    const mediaId = await newMedia();
    const first = await stageOutputs(deps(), { projectId }, mediaId, [
      { ...(await output()), folder: 'outs', filename: 'poster.png' },
    ]);
    await transact(deps().db, (trx) => first.insert(trx));
    const second = await stageOutputs(deps(), { projectId }, mediaId, [
      { ...(await output()), folder: 'outs', filename: 'poster.png' },
    ]);
    assert.equal((await refusal(second)).code, 'file_conflict');
    assert.deepEqual(await journal(), []);
  });
});
