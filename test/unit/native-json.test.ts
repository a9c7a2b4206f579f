import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import type { TSchema } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { FileSchema } from '../../src/api/file-schemas.js';
import { MediaSchema } from '../../src/api/media.js';
import type { FilesTable, MediaTable } from '../../src/db/schema.js';
import { listBody, objectBody } from '../../src/http/envelope.js';
import { JsonText, nativeJson } from '../../src/http/json-text.js';
import { errorResponses, listEnvelope, objectEnvelope } from '../../src/http/schemas.js';
import { fileJson, fileListJson, toFileObject, toMediaObject } from '../../src/shapes/files.js';

// Routes marked nativeJson skip fast-json-stringify's allow-list: their bodies must already be
// exactly what the response schema lets through. Each body below is built from database rows
// that carry internal columns (blob_key, probe, project_id), as the services read them.

const PUBLIC_URL = 'https://media.example';

const fileRow = (over: Partial<FilesTable> = {}): FilesTable => ({
  id: 'file_0123456789abcdef',
  project_id: 'prj_0123456789abcdef',
  media_id: 'med_0123456789abcdef',
  kind: 'video',
  format: 'mp4',
  type: 'video/mp4',
  width: 1920,
  height: 1080,
  duration: 12.5,
  filesize: 123456,
  folder: 'a b/c',
  filename: 'clip ü.mp4',
  ref: 'original',
  metadata: '{"tags":["x"],"n":1}',
  status: 'ready',
  blob_key: 'prj/file',
  probe: '{"secret":true}',
  created: '2026-01-01T00:00:00.000Z',
  updated: '2026-01-02T00:00:00.000Z',
  ...over,
});

const mediaRow: MediaTable = {
  id: 'med_0123456789abcdef',
  project_id: 'prj_0123456789abcdef',
  kind: 'video',
  title: 'T',
  alt: null,
  width: 1920,
  height: 1080,
  duration: 12.5,
  background: '#102030',
  metadata: '{}',
  created: '2026-01-01T00:00:00.000Z',
  updated: '2026-01-01T00:00:00.000Z',
};

const req = {
  id: 'req_0123456789abcdefghij',
  auth: { orgId: 'org_x', projectId: 'prj_x', keyId: 'key_x' },
  apiVersion: '2025-08-20',
} as unknown as FastifyRequest;

/** What fast-json-stringify makes of body under schema (a route without nativeJson) against JSON.stringify (one with it). */
async function bothWays(schema: TSchema, body: unknown): Promise<[unknown, unknown]> {
  const app = Fastify();
  app.get('/schema', { schema: { response: { 200: schema, ...errorResponses } } }, async () => body);
  app.get('/native', { ...nativeJson, schema: { response: { 200: schema, ...errorResponses } } }, async () => body);
  const [a, b] = await Promise.all([app.inject('/schema'), app.inject('/native')]);
  await app.close();
  return [a.json(), b.json()];
}

describe('nativeJson routes give what their schema allows, no more', () => {
  const files = [
    fileRow(),
    fileRow({
      id: 'file_b',
      kind: 'image',
      format: null,
      width: null,
      height: null,
      duration: 3,
      ref: null,
      metadata: '{}',
      folder: '',
    }),
  ];

  it('a file and a page of files', async () => {
    const one = objectBody(req, toFileObject(PUBLIC_URL, files[0]!), { self: 's', parent: 'p' });
    const [viaSchema, native] = await bothWays(objectEnvelope(FileSchema), one);
    assert.deepEqual(native, viaSchema);
    assert.equal((native as { data: { blob_key?: string } }).data.blob_key, undefined);

    // The file as GET /files/{id} sends it: rendered as JSON text where its row was read.
    const renderedOne = objectBody(req, new JsonText(fileJson(PUBLIC_URL, [files[0]!])), { self: 's', parent: 'p' });
    const [, renderedOneNative] = await bothWays(objectEnvelope(FileSchema), renderedOne);
    assert.deepEqual(renderedOneNative, viaSchema);
    assert.equal(fileJson(PUBLIC_URL, []), '', 'no row: no text (the service answers not_found)');

    const page = listBody(req, `${PUBLIC_URL}/files`, {
      items: files.map((f) => toFileObject(PUBLIC_URL, f)),
      total: 2,
      page: 1,
      limit: 20,
    });
    const [listViaSchema, listNative] = await bothWays(listEnvelope(FileSchema), page);
    assert.deepEqual(listNative, listViaSchema);

    // The page as GET /files sends it: its items rendered as JSON text where they were read.
    const rendered = listBody(req, `${PUBLIC_URL}/files`, {
      items: new JsonText(fileListJson(PUBLIC_URL, files)),
      total: 2,
      page: 1,
      limit: 20,
    });
    const [, renderedNative] = await bothWays(listEnvelope(FileSchema), rendered);
    assert.deepEqual(renderedNative, listViaSchema);
  });

  it('a media with its files', async () => {
    const media = objectBody(req, toMediaObject(PUBLIC_URL, mediaRow, files), { self: 's', parent: 'p' });
    const [viaSchema, native] = await bothWays(objectEnvelope(MediaSchema), media);
    assert.deepEqual(native, viaSchema);
  });
});
