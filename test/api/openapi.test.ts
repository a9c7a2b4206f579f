import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { validate } from '@readme/openapi-parser';
import type { Browser } from 'playwright-core';
import { OPERATIONS } from '../../src/api/docs/operations.js';
import { ERROR_CATALOGUE } from '../../src/errors.js';
import { chromiumAvailable, guardedPage, launchBrowser } from '../helpers/browser.js';
import { Contract } from '../helpers/contract.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// /openapi.json, /docs and /llms.txt (issue 13), and GET /tasks-config against POST /tasks.

let t: TestServer;
let origin: Origin;
let key: string;
let envelopeDoc: any;
let bareDoc: any;

before(async () => {
  origin = await startOrigin();
  // No workers: tasks created here stay pending (only their creation is tested).
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '0' });
  ({ key } = await t.key('docs', 'main'));
  envelopeDoc = (await t.call('GET', '/openapi.json')).json;
  bareDoc = (await t.call('GET', '/openapi.json?generation=bare')).json;
});
after(async () => {
  await t.stop();
  await origin.close();
});

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, in both generations, without a key', async () => {
    for (const doc of [envelopeDoc, bareDoc]) {
      assert.equal(doc.openapi, '3.1.0');
      const result = await validate(structuredClone(doc));
      assert.equal(result.valid, true, JSON.stringify(result));
    }
  });

  it('documents every operation of the catalogue, and nothing else', () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<any>(envelopeDoc.paths)) {
      for (const method of Object.keys(item))
        documented.add(`${method.toUpperCase()} ${path.replace('{path}', '*').replace(/\{(\w+)\}/g, ':$1')}`);
    }
    const catalogue = Object.keys(OPERATIONS).filter((k) => !k.startsWith('HEAD '));
    assert.deepEqual([...documented].sort(), catalogue.sort());
    const ids = Object.values(OPERATIONS).map((o) => o.id);
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
  });

  it('gives every operation its errors, its security, its version and idempotency headers', () => {
    assert.deepEqual(envelopeDoc.components.securitySchemes.apiKey, {
      type: 'http',
      scheme: 'bearer',
      description: envelopeDoc.components.securitySchemes.apiKey.description,
    });
    for (const [path, item] of Object.entries<any>(envelopeDoc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const where = `${method} ${path}`;
        assert.ok(op.operationId && op.summary && op.tags?.length === 1, where);
        const error = op.responses['4XX']?.content?.['application/json']?.schema;
        assert.ok(error?.properties?.error?.properties?.code, `${where} documents its 4XX error envelope`);
        const params = (op.parameters ?? []).map((p: any) => `${p.in}:${p.name}`);
        const versioned = !path.startsWith('/d/') && path !== '/health' && path !== '/metrics';
        if (versioned)
          assert.ok(params.includes('header:Accept-Version') && params.includes('header:ACCEPT_VERSION'), where);
        if (method === 'post') assert.ok(params.includes('header:Idempotency-Key'), where);
        // A query parameter the server fills in (page, limit, range) is not required of clients.
        for (const p of op.parameters ?? [])
          if (p.in === 'query' && p.schema?.default !== undefined)
            assert.equal(p.required, false, `${where}: query.${p.name} has a default, so it is optional`);
      }
    }
    assert.equal(envelopeDoc.paths['/files'].get.parameters.find((p: any) => p.name === 'limit').required, false);
  });

  it('describes the bare generation as the envelope’s data, lists with Link and X-Total-Count, errors as the error object', () => {
    const list = bareDoc.paths['/files'].get.responses['200'];
    assert.equal(list.content['application/json'].schema.type, 'array');
    assert.ok(list.headers.Link && list.headers['X-Total-Count']);
    const one = bareDoc.paths['/files/{id}'].get.responses['200'].content['application/json'].schema;
    assert.ok(one.properties.id && !one.properties.meta);
    const error = bareDoc.paths['/files/{id}'].get.responses['4XX'].content['application/json'].schema;
    assert.deepEqual(Object.keys(error.properties).sort(), ['code', 'details', 'message', 'status']);
  });

  it('holds answers to it: a body the document does not describe is caught', () => {
    const contract = new Contract({ envelope: envelopeDoc, bare: bareDoc });
    const headers = { 'content-type': 'application/json', 'mediad-version': '2025-07-01' };
    const good = {
      meta: { request_id: 'req_1', org_id: 'org_1', project_id: 'prj_1', version: '2025-07-01', type: 'object' },
      data: { status: 'ok' },
      error: null,
      links: { self: 's', parent: 'p' },
    };
    assert.deepEqual(contract.check('GET', '/health', 200, headers, JSON.stringify(good)), []);
    assert.equal(
      contract.check('GET', '/health', 200, headers, JSON.stringify({ ...good, data: { status: 1 } })).length,
      1,
    );
    assert.equal(
      contract.check('GET', '/files/file_x', 200, { ...headers, 'mediad-version': '2025-08-20' }, JSON.stringify(good))
        .length,
      1,
      'an envelope where the bare object is due',
    );
  });

  it('lists every error code of the catalogue in the guide', () => {
    for (const code of Object.keys(ERROR_CATALOGUE))
      assert.ok(envelopeDoc.info.description.includes(`\`${code}\``), code);
  });
});

describe('/llms.txt and the guide as Markdown', () => {
  it('links each section, and each section is served', async () => {
    const txt = await t.call('GET', '/llms.txt');
    assert.equal(txt.status, 200);
    assert.match(txt.headers['content-type']!, /^text\/plain/);
    const links = [...txt.text.matchAll(/\((https:[^)]+\.md)\)/g)].map((m) => m[1]!);
    assert.ok(links.length >= 4);
    for (const link of links) {
      const md = await t.call('GET', link);
      assert.equal(md.status, 200, link);
      assert.match(md.text, /^# /);
    }
    assert.equal((await t.call('GET', '/docs/no-such-section.md')).status, 404);
  });
});

describe('/docs in a browser', { skip: !chromiumAvailable() && 'Debian chromium is not installed' }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(() => browser.close());

  it('renders the reference with the guide and fetches nothing from outside the server', async () => {
    const { page, outside, context } = await guardedPage(browser, t.base);
    try {
      await page.goto(`${t.base}/docs/`, { waitUntil: 'networkidle' });
      await page.getByText('Getting started', { exact: false }).first().waitFor({ timeout: 20_000 });
      await page.getByText('Add a file from a URL').first().waitFor({ timeout: 20_000 });
      assert.deepEqual(outside, [], 'no request left the server');
    } finally {
      await context.close();
    }
  });
});

/** A valid value for an option schema (its first enum value, its minimum, a plain string). */
function sample(name: string, schema: any): unknown {
  const examples: Record<string, unknown> = {
    workflow: [{ kind: 'image', width: 8 }],
    conditions: [{ prop: 'kind', value: 'video' }],
    url: 'https://hooks.example.com/mediad',
    headers: { 'x-a': 'b' },
    metadata: { a: 1 },
    body: { a: 1 },
    preset: 'veryfast',
    media_id: undefined,
    background: '#112233',
    language: 'en',
  };
  if (name in examples) return examples[name];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.anyOf) return sample(name, schema.anyOf[0]);
  if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
  if (schema.type === 'boolean') return true;
  if (schema.type === 'string') return 'x';
  return undefined;
}

describe('GET /tasks-config', () => {
  it('lists what POST /tasks accepts: each option listed is accepted, an option not listed is refused', async () => {
    const config = (await t.call('GET', '/tasks-config', { key })).json.data;
    assert.ok(config.video.formats.includes('webm'));
    assert.ok(config.video.codecs.includes('av1'));
    assert.equal(config.ingest.input, 'url');
    assert.equal(config.http.input, 'none');
    assert.deepEqual(config.speech.input_kinds, ['audio', 'video']);
    assert.deepEqual(
      config.speech.engine,
      { default: 'local' },
      'pocketsphinx is installed, no provider is configured',
    );
    assert.match(config.prompt.engine.unavailable, /MEDIAD_AI_CHAT_MODEL/);
    assert.equal(config.video.engine, undefined, 'the transform kinds use no intelligence engine');
    const video = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-mp4') } })).json.data;
    for (const [kind, c] of Object.entries<any>(config)) {
      const input =
        c.input === 'file'
          ? { file_id: video.id }
          : c.input === 'url'
            ? { url: origin.url('/fixtures/video-mp4') }
            : {};
      const base: Record<string, unknown> = { kind, ...input };
      for (const name of c.required) base[name] = sample(name, c.options[name]);
      if (c.engine?.unavailable) {
        // Listed with why it cannot run here, and refused for that reason at creation.
        const refused = await t.call('POST', '/tasks', { key, body: base });
        assert.equal(refused.status, 422, `${kind}: ${refused.text}`);
        assert.equal(refused.json.error.code, 'engine_unavailable');
        continue;
      }
      const plain = await t.call('POST', '/tasks', { key, body: base });
      assert.equal(plain.status, 201, `${kind} with its required options: ${plain.text}`);
      for (const [name, schema] of Object.entries<any>(c.options)) {
        const value = sample(name, schema);
        if (value === undefined || c.required.includes(name)) continue;
        const res = await t.call('POST', '/tasks', { key, body: { ...base, [name]: value } });
        assert.equal(res.status, 201, `${kind}.${name} = ${JSON.stringify(value)}: ${res.text}`);
      }
      const unknown = await t.call('POST', '/tasks', { key, body: { ...base, not_an_option: 1 } });
      assert.equal(unknown.status, 400, kind);
      assert.equal(unknown.json.error.details[0].field, 'not_an_option');
    }
  });

  it('answers in both generations', async () => {
    const bare = await t.call('GET', '/tasks-config', { key, headers: { 'accept-version': '2025-08-20' } });
    assert.equal(bare.json.image.input, 'file');
  });
});
