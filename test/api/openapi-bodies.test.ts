import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { EXAMPLE_FILE_ID } from '../../src/api/docs/task-bodies.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// What /openapi.json says about requests (issue 21): every operation described, every request body
// with an example that its schema accepts, POST /tasks as one schema per kind (from the kinds' own
// option schemas, as GET /tasks-config shows them) whose examples the API accepts, and code samples
// on every operation that run as copied.

const run = promisify(execFile);
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

let t: TestServer;
let origin: Origin;
let key: string;
let doc: any;

before(async () => {
  origin = await startOrigin();
  // No workers: tasks created here stay pending (only their creation is tested).
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '0' });
  ({ key } = await t.key('bodies', 'main'));
  doc = (await t.call('GET', '/openapi.json')).json;
});
after(async () => {
  await t.stop();
  await origin.close();
});

const operations = () =>
  Object.entries<any>(doc.paths).flatMap(([p, item]) =>
    Object.entries<any>(item).map(([method, op]) => ({ where: `${method.toUpperCase()} ${p}`, path: p, method, op })),
  );

/** A validator of `schema`, resolving the document's own $refs. */
function validator(schema: unknown) {
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  ajv.addSchema({ ...doc, $id: 'doc' }, 'doc');
  const rewrite = (s: any): any =>
    Array.isArray(s)
      ? s.map(rewrite)
      : s && typeof s === 'object'
        ? Object.fromEntries(
            Object.entries(s).map(([k, v]) => [k, k === '$ref' ? `doc${String(v)}` : rewrite(v)] as const),
          )
        : s;
  return ajv.compile(rewrite(schema));
}

describe('/openapi.json describes every request', () => {
  it('gives every operation a description', () => {
    const missing = operations()
      .filter(({ op }) => !op.description)
      .map((o) => o.where);
    assert.deepEqual(missing, []);
  });

  it('gives every request body an example its schema accepts', () => {
    const bodies = operations().filter(({ op }) => op.requestBody);
    assert.ok(bodies.length >= 30, `${bodies.length} bodies`);
    for (const { where, op } of bodies) {
      const content = op.requestBody.content;
      const json = content['application/json'];
      if (!json) {
        assert.ok(content['application/octet-stream'], `${where}: raw bytes`);
        continue;
      }
      const examples = json.examples
        ? Object.values<any>(json.examples).map((e) => e.value)
        : json.example !== undefined
          ? [json.example]
          : [];
      assert.ok(examples.length > 0, `${where} has an example`);
      const validate = validator(json.schema);
      for (const example of examples)
        assert.ok(validate(example), `${where}: ${JSON.stringify(example)} ${JSON.stringify(validate.errors)}`);
    }
  });

  it('documents the upload: PUT /d/{path} takes the file’s bytes', () => {
    assert.ok(doc.paths['/d/{path}'].put.requestBody.content['application/octet-stream']);
  });
});

describe('POST /tasks, one schema per kind', () => {
  it('is a oneOf discriminated by kind, generated from the kinds’ options as GET /tasks-config shows them', async () => {
    const body = doc.paths['/tasks'].post.requestBody.content['application/json'];
    const config = (await t.call('GET', '/tasks-config', { key })).json.data;
    assert.equal(body.schema.discriminator.propertyName, 'kind');
    assert.deepEqual(Object.keys(body.schema.discriminator.mapping).sort(), Object.keys(config).sort());
    assert.equal(body.schema.oneOf.length, Object.keys(config).length);
    for (const [kind, c] of Object.entries<any>(config)) {
      const name = body.schema.discriminator.mapping[kind].replace('#/components/schemas/', '');
      const schema = doc.components.schemas[name];
      assert.deepEqual(schema.properties.kind, { type: 'string', const: kind });
      for (const [option, optionSchema] of Object.entries(c.options))
        assert.deepEqual(schema.properties[option], optionSchema, `${kind}.${option}`);
      for (const required of c.required) assert.ok(schema.required.includes(required), `${kind} requires ${required}`);
      assert.equal(schema.additionalProperties, false);
      assert.ok(schema.description, `${kind} is described`);
      assert.ok(body.examples[kind], `an example of ${kind}`);
    }
    // What the document said before: width, format, codec, count … appear now.
    const video = doc.components.schemas.VideoTaskBody.properties;
    assert.ok(video.width && video.codec && doc.components.schemas.ThumbnailsTaskBody.properties.count);
  });

  it('takes every kind’s example as documented (the file id replaced by a real one)', async () => {
    const config = (await t.call('GET', '/tasks-config', { key })).json.data;
    const video = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-mp4') } })).json.data;
    const examples = doc.paths['/tasks'].post.requestBody.content['application/json'].examples;
    for (const [kind, example] of Object.entries<any>(examples)) {
      const body = JSON.parse(JSON.stringify(example.value).replaceAll(EXAMPLE_FILE_ID, video.id));
      if (kind === 'ingest') body.url = origin.url('/fixtures/video-mp4');
      const res = await t.call('POST', '/tasks', { key, body });
      if (config[kind].engine?.unavailable) {
        assert.equal(res.status, 422, `${kind}: ${res.text}`);
        assert.equal(res.json.error.code, 'engine_unavailable');
      } else assert.equal(res.status, 201, `${kind}: ${res.text}`);
    }
  });
});

describe('code samples on every operation', () => {
  it('curl and Node.js with the local CA and $MEDIAD_API_KEY', () => {
    const ca = path.join(t.dataDir, 'tls', 'ca.crt');
    for (const { where, op } of operations()) {
      const samples = op['x-codeSamples'];
      const curl = samples?.find((s: any) => s.label === 'curl')?.source;
      assert.ok(curl?.includes(`--cacert ${ca}`), `${where}: ${curl}`);
      const keyed = !op.security || op.security.some((s: any) => 'apiKey' in s);
      if (keyed) assert.ok(curl.includes('Bearer $MEDIAD_API_KEY'), where);
      const node = samples.find((s: any) => s.label === 'Node.js')?.source;
      if (node) assert.ok(node.includes(`NODE_EXTRA_CA_CERTS=${ca}`), where);
    }
  });

  it('run as copied: curl in bash and Node.js as their first line says', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-samples-'));
    try {
      const file = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).json
        .data;
      const env = { ...process.env, MEDIAD_API_KEY: key, FILE_ID: file.id, MEDIA_ID: file.media_id };
      const cases = [
        'GET /files',
        'GET /tasks-config',
        'GET /files/{id}',
        'GET /media/{id}',
        'PATCH /files/{id}',
        'POST /tasks',
      ];
      for (const where of cases) {
        const op = operations().find((o) => o.where === where)!.op;
        const curl = op['x-codeSamples'].find((s: any) => s.label === 'curl').source;
        const { stdout } = await run('bash', ['-c', curl], { cwd: dir, env });
        const answer = JSON.parse(stdout);
        assert.ok(answer.data && !answer.error, `${where}: ${stdout}`);
        const node = op['x-codeSamples'].find((s: any) => s.label === 'Node.js').source as string;
        await fs.writeFile(path.join(dir, 'example.mjs'), node);
        const command = /^\/\/ Run with: (.+)$/m.exec(node)![1]!;
        const out = await run('bash', ['-c', command], { cwd: dir, env });
        assert.match(out.stdout, /^20[01] \{/, `${where}: ${out.stdout}${out.stderr}`);
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
