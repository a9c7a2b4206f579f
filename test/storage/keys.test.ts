import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { fileBlobKey, isValidKey, validateKey, validatePrefix } from '../../src/storage/keys.js';

const isBadRequest = (e: unknown) => e instanceof AppError && e.code === 'bad_request';

describe('blob keys', () => {
  it('builds file keys', () => {
    assert.equal(fileBlobKey('prj_abc', 'file_xyz'), 'projects/prj_abc/files/file_xyz');
  });

  it('refuses ids that would add or escape segments', () => {
    for (const [p, f] of [
      ['..', 'f'],
      ['p', '../x'],
      ['p/q', 'f'],
      ['', 'f'],
      ['p', '.hidden'],
      ['p', 'a\\b'],
    ] as const) {
      assert.throws(() => fileBlobKey(p, f), isBadRequest, `${p} ${f}`);
    }
  });

  it('accepts ordinary keys and refuses unsafe ones', () => {
    for (const ok of ['a', 'a/b/c', 'projects/prj_1/files/file_2', 'x-y_z.v1', 'a..b'])
      assert.equal(validateKey(ok), ok);
    for (const bad of [
      '',
      '..',
      '../a',
      'a/..',
      'a/../b',
      '/a',
      'a\\b',
      'a//b',
      'a/',
      'a\0b',
      'a\nb',
      '.tmp/x',
      'x'.repeat(1025),
    ]) {
      assert.throws(() => validateKey(bad), isBadRequest, JSON.stringify(bad));
      assert.equal(isValidKey(bad), false);
    }
  });

  it('prefixes may be empty or end with a slash', () => {
    for (const ok of ['', 'projects/', 'projects/prj_1', 'projects/prj_1/files/']) assert.equal(validatePrefix(ok), ok);
    for (const bad of ['/', '../', 'a//', '/abs/', 'a/../'])
      assert.throws(() => validatePrefix(bad), isBadRequest, bad);
  });
});
