import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { Webhook } from 'standardwebhooks';
import ts from 'typescript';
import { fetch as undiciFetch } from 'undici';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// A client generated from /openapi.json (openapi-typescript types + openapi-fetch) compiles
// under strict TypeScript and runs a files -> task -> webhook scenario against the server.

const DIR = path.resolve('.test-cache/openapi-client');

const SCENARIO = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export interface Outcome { fileId: string; taskId: string; status: string; outputUrl: string | undefined; secret: string }

export async function scenario(baseUrl: string, key: string, fetch: (r: Request) => Promise<Response>, source: string, hook: string): Promise<Outcome> {
  const client = createClient<paths>({ baseUrl, fetch, headers: { authorization: \`Bearer \${key}\` } });
  const created = await client.POST('/files', { body: { url: source, folder: 'generated' } });
  if (!created.data) throw new Error(\`POST /files: \${JSON.stringify(created.error)}\`);
  const file = created.data.data;
  const task = await client.POST('/tasks', { body: { kind: 'image', file_id: file.id, width: 16, format: 'png', webhook_url: hook } });
  if (!task.data) throw new Error(\`POST /tasks: \${JSON.stringify(task.error)}\`);
  let current = task.data.data;
  for (let i = 0; i < 600 && !['completed', 'failed', 'cancelled'].includes(current.status); i++) {
    await new Promise((r) => setTimeout(r, 50));
    const got = await client.GET('/tasks/{id}', { params: { path: { id: current.id } } });
    if (!got.data) throw new Error(\`GET /tasks/{id}: \${JSON.stringify(got.error)}\`);
    current = got.data.data;
  }
  const secret = await client.GET('/project/webhook-secret');
  if (!secret.data) throw new Error('GET /project/webhook-secret');
  const output = current.output as { url?: string } | null;
  return { fileId: file.id, taskId: current.id, status: current.status, outputUrl: output?.url, secret: secret.data.data.secret };
}
`;

/** The generated scenario module's export (it is written at test time). */
type Scenario = (
  baseUrl: string,
  key: string,
  fetch: (r: Request) => Promise<Response>,
  source: string,
  hook: string,
) => Promise<{ fileId: string; taskId: string; status: string; outputUrl: string | undefined; secret: string }>;

let t: TestServer;
let origin: Origin;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  origin = await startOrigin();
  receiver = await startReceiver();
  t = await startTestServer({
    MEDIAD_ALLOWED_URL_HOSTS: `${origin.host},${receiver.host}`,
    MEDIAD_WORKER_CONCURRENCY: '1',
  });
});
after(async () => {
  await t.stop();
  await origin.close();
  await receiver.close();
});

describe('a client generated from /openapi.json', () => {
  it('compiles under strict TypeScript and runs files -> task -> webhook', async () => {
    const doc = (await t.call('GET', '/openapi.json')).json;
    await fs.mkdir(DIR, { recursive: true });
    await fs.writeFile(path.join(DIR, 'api.d.ts'), astToString(await openapiTS(doc)));
    await fs.writeFile(path.join(DIR, 'scenario.ts'), SCENARIO);

    const program = ts.createProgram([path.join(DIR, 'scenario.ts')], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      skipLibCheck: true,
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(diagnostics, [], 'the generated types and the scenario compile');

    const { key } = await t.key('generated', 'client');
    // openapi-fetch builds a standard Request; it is sent with undici and the test CA.
    const fetch = async (req: Request) => {
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.text();
      const res = await undiciFetch(req.url, {
        method: req.method,
        headers: Object.fromEntries(req.headers),
        body,
        dispatcher: t.agent,
      });
      return new Response(await res.arrayBuffer(), { status: res.status, headers: Object.fromEntries(res.headers) });
    };
    // Run as its user would: compiled to JavaScript by the same compiler (the test itself may run
    // built, without a TypeScript loader).
    const js = ts.transpileModule(SCENARIO, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    await fs.writeFile(path.join(DIR, 'scenario.mjs'), js);
    const { scenario } = (await import(pathToFileURL(path.join(DIR, 'scenario.mjs')).href)) as { scenario: Scenario };
    const outcome = await scenario(t.base, key, fetch, origin.url('/fixtures/image-png'), receiver.url('/hook'));
    assert.match(outcome.fileId, /^file_/);
    assert.equal(outcome.status, 'completed');
    assert.match(outcome.outputUrl ?? '', /\/d\/prj_/);
    const [delivery] = await receiver.waitFor(1);
    const verified = new Webhook(outcome.secret).verify(
      delivery!.body,
      delivery!.headers as Record<string, string>,
    ) as { id: string; status: string };
    assert.equal(verified.id, outcome.taskId);
    assert.equal(verified.status, 'completed');
  });
});
