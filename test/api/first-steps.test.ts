import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The guide's first processed file (/docs, "Getting started"; issue 21): its curl and Node.js
// snippets, taken from the served Markdown and run as copied — bash and node in an empty
// directory, with only MEDIAD_API_KEY and MEDIAD_PROJECT set as the guide says — reach a
// completed task made from a local file.

const run = promisify(execFile);
let t: TestServer;
let dir: string;
let env: NodeJS.ProcessEnv;
let markdown: string;

before(async () => {
  t = await startTestServer({ MEDIAD_WORKER_CONCURRENCY: '1' });
  const { key, project_id } = await t.key('first', 'steps');
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-first-steps-'));
  env = { ...process.env, MEDIAD_API_KEY: key, MEDIAD_PROJECT: project_id };
  markdown = (await t.call('GET', '/docs/getting-started.md')).text;
});
after(async () => {
  await t.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

const block = (lang: string) => {
  const found = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(markdown);
  assert.ok(found, `a ${lang} block in the guide`);
  return found[1]!;
};

describe('the guide’s first file, as copied', () => {
  it('curl: makes a clip, uploads it, runs an image task on it and waits until it completes', async () => {
    const shell = block('sh');
    assert.ok(shell.includes(`--cacert ${path.join(t.dataDir, 'tls', 'ca.crt')}`));
    assert.ok(!shell.includes('example.com'), 'no example.com clip');
    const { stdout, stderr } = await run('bash', ['-c', shell], { cwd: dir, env, timeout: 120_000 });
    assert.match(stdout, /^file: file_\w+$/m, stderr);
    assert.match(stdout, /^task: task_\w+$/m);
    assert.match(stdout, /"status":"completed"/);
    assert.match(stdout, /"url":"https:\/\/localhost:\d+\/d\/prj_\w+\/uploads\/file_\w+\.webp"/);
  });

  it('Node.js: the same with fetch, run with the command its first lines give', async () => {
    const js = block('js');
    await fs.writeFile(path.join(dir, 'first-task.mjs'), js);
    const command = /^\/\/ {3}(.+)$/m.exec(js)![1]!;
    assert.match(command, /^NODE_EXTRA_CA_CERTS=\S+ node first-task\.mjs$/);
    const { stdout, stderr } = await run('bash', ['-c', command], { cwd: dir, env, timeout: 120_000 });
    assert.match(stdout, /^file: file_\w+$/m, stderr);
    assert.match(stdout, /^completed https:\/\/localhost:\d+\/d\/prj_\w+\/uploads\/file_\w+\.webp$/m);
  });
});
