// The worker pool's scratch directories (src/workers/scratch.ts): an empty one is kept and renamed
// for the next task instead of removed and made again; one its task left files in is removed; no
// more are kept than asked; the pool's stop removes the kept ones.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ScratchDirs } from '../../src/workers/scratch.js';

let root: string;
before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-scratch-dirs-'));
});
after(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const names = async (dir: string) => (await fs.readdir(dir)).sort();

test('an empty directory is kept and becomes the next task’s, under that task’s name', async () => {
  const dir = await fs.mkdtemp(path.join(root, 'reuse-'));
  const scratch = new ScratchDirs(dir, 2);
  const first = scratch.take('task_a');
  assert.match(path.basename(first), /^task-task_a-/);
  const inode = statSync(first).ino;
  await scratch.release(first);
  assert.deepEqual(
    (await names(dir)).map((n) => n.replace(/-[^-]+$/, '')),
    ['spare'],
    'kept, not removed',
  );
  const second = scratch.take('task_b');
  assert.match(path.basename(second), /^task-task_b-/, 'the next task’s id is in its name');
  assert.equal(statSync(second).ino, inode, 'the same directory, renamed: no new inode');
  assert.deepEqual(await names(dir), [path.basename(second)]);
  await scratch.close();
});

test('a directory its task left files in is removed, and a new one made for the next task', async () => {
  const dir = await fs.mkdtemp(path.join(root, 'left-'));
  const scratch = new ScratchDirs(dir, 2);
  const used = scratch.take('task_a');
  await fs.mkdir(path.join(used, 'package'));
  await fs.writeFile(path.join(used, 'package', 'segment.ts'), 'x');
  await scratch.release(used);
  assert.deepEqual(await names(dir), [], 'removed with what it held');
  const next = scratch.take('task_b');
  assert.deepEqual(await names(next), []);
  await scratch.release(next);
  await scratch.close();
  assert.deepEqual(await names(dir), [], 'the stop removes the kept directories');
});

test('no more are kept than asked, and a kept one removed meanwhile is made again', async () => {
  const dir = await fs.mkdtemp(path.join(root, 'limit-'));
  const scratch = new ScratchDirs(dir, 1);
  const a = scratch.take('task_a');
  const b = scratch.take('task_b');
  await scratch.release(a);
  await scratch.release(b);
  assert.equal((await names(dir)).length, 1, 'one kept, the other removed');
  await fs.rm(path.join(dir, (await names(dir))[0]!), { recursive: true });
  const c = scratch.take('task_c');
  assert.match(path.basename(c), /^task-task_c-/);
  assert.deepEqual(await names(dir), [path.basename(c)]);
  await scratch.release(c);
  await scratch.close();
  assert.deepEqual(await names(dir), []);
});
