import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyError, FastifyRequest } from 'fastify';
import { AppError } from '../../src/errors.js';
import { listBody } from '../../src/http/envelope.js';
import { toAppError } from '../../src/http/errors.js';
import { checkFilename, normalizeFolder } from '../../src/services/media/paths.js';
import { hasPrefix, newId } from '../../src/ids.js';

describe('error mapping', () => {
  it('turns an unexpected error into internal_error without its internals', () => {
    const err = toAppError(new Error('SQLITE_BUSY at /srv/secret/path.db') as FastifyError);
    assert.equal(err.code, 'internal_error');
    assert.equal(err.status, 500);
    assert.doesNotMatch(err.message, /secret|SQLITE/);
  });

  it('maps validation issues to field paths', () => {
    const err = Object.assign(new Error('x'), {
      validation: [
        { instancePath: '/workflow/1/next/0/width', keyword: 'type', params: {}, message: 'must be integer' },
        { instancePath: '', keyword: 'required', params: { missingProperty: 'url' } },
      ],
      validationContext: 'body',
    }) as unknown as FastifyError;
    const app = toAppError(err);
    assert.equal(app.code, 'validation_failed');
    assert.deepEqual(
      app.details?.map((d) => d.field),
      ['workflow[1].next[0].width', 'url'],
    );
  });

  it('keeps AppErrors as they are', () => {
    const e = new AppError('file_conflict', 'taken');
    assert.equal(toAppError(e as unknown as FastifyError), e);
    assert.equal(e.status, 409);
  });
});

describe('folder and filename rules', () => {
  it('normalises folders and refuses dot segments and URL delimiters', () => {
    assert.equal(normalizeFolder('/a/b/'), 'a/b');
    assert.equal(normalizeFolder(undefined), '');
    for (const bad of ['a/../b', './a', 'a//b', 'a?b', 'a#b', 'a%2fb', 'a\\b', 'a\u0000b'])
      assert.throws(() => normalizeFolder(bad), AppError, bad);
    assert.equal(checkFilename('clip (1).mp4'), 'clip (1).mp4');
    for (const bad of ['', '..', 'a/b', ' lead', 'x'.repeat(256)])
      assert.throws(() => checkFilename(bad), AppError, bad);
  });
});

describe('ids', () => {
  it('have the SPEC prefixes and 16+ base62 characters', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('file')));
    assert.equal(ids.size, 1000);
    for (const id of ids) assert.ok(hasPrefix(id, 'file'), id);
    assert.match(newId('request'), /^req_[A-Za-z0-9]{20}$/);
  });
});

describe('list links', () => {
  const req = { id: 'req_x', auth: { orgId: 'org_1', projectId: 'prj_1', keyId: 'k' } } as unknown as FastifyRequest;
  it('computes pages and null prev/next at the ends', () => {
    const mid = listBody(req, 'https://h/files', { items: [1, 2], total: 45, page: 2, limit: 20 });
    assert.equal(mid.meta.pages, 3);
    assert.equal(mid.links.prev, 'https://h/files?page=1&limit=20');
    assert.equal(mid.links.next, 'https://h/files?page=3&limit=20');
    const none = listBody(req, 'https://h/files', { items: [], total: 0, page: 1, limit: 20 });
    assert.equal(none.meta.pages, 1);
    assert.equal(none.links.prev, null);
    assert.equal(none.links.next, null);
    const past = listBody(req, 'https://h/files', { items: [], total: 45, page: 7, limit: 20 });
    assert.equal(past.links.next, null);
    assert.equal(past.links.prev, 'https://h/files?page=3&limit=20');
    // Filters come first in every link, encoded as a form query.
    const filtered = listBody(
      req,
      'https://h/events',
      { items: [], total: 45, page: 2, limit: 20 },
      { type: 'task.completed & x/ü' },
    );
    assert.equal(filtered.links.self, 'https://h/events?type=task.completed+%26+x%2F%C3%BC&page=2&limit=20');
    assert.equal(filtered.links.last, 'https://h/events?type=task.completed+%26+x%2F%C3%BC&page=3&limit=20');
  });
});
