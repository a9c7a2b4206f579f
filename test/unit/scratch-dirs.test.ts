// The worker pool's scratch directories (src/workers/scratch-dirs.ts): an empty one is kept for the
// next task, one with something left in it or of a task that did not end normally is removed, and
// no more are kept than asked.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ScratchDirs } from '../../src/workers/scratch-dirs.js';

let root: string;
before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-scratch-'));
});
after(() => fs.rm(root, { recursive: true, force: true }));

const exists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

test('an empty directory of a task that ended normally is the next task’s', async () => {
  const dirs = new ScratchDirs(root, 2);
  const a = dirs.take();
  assert.equal(path.dirname(a), root);
  assert.deepEqual(await fs.readdir(a), []);
  await dirs.give(a, true);
  assert.equal(dirs.take(), a);
  await dirs.give(a, true);
});

test('a directory with something left in it is removed, whatever is in it', async () => {
  const dirs = new ScratchDirs(root, 2);
  const a = dirs.take();
  await fs.mkdir(path.join(a, 'frames'));
  await fs.writeFile(path.join(a, 'frames', '1.png'), 'x');
  await dirs.give(a, true);
  assert.equal(await exists(a), false);
  const b = dirs.take();
  assert.notEqual(b, a);
  assert.deepEqual(await fs.readdir(b), []);
});

test('the directory of a task that failed or was stopped is removed even when empty', async () => {
  const dirs = new ScratchDirs(root, 2);
  const a = dirs.take();
  await dirs.give(a, false);
  assert.equal(await exists(a), false);
  assert.notEqual(dirs.take(), a);
});

test('no more empty directories are kept than asked; the rest are removed', async () => {
  const dirs = new ScratchDirs(root, 1);
  const a = dirs.take();
  const b = dirs.take();
  assert.notEqual(a, b);
  await dirs.give(a, true);
  await dirs.give(b, true);
  assert.equal(await exists(a), true);
  assert.equal(await exists(b), false);
});
