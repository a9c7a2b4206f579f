import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MEDIAD } from '../helpers/paths.js';

const run = promisify(execFile);
const CLI = MEDIAD;

function plainRequest(port: number, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/files?page=1', headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

function plainGet(
  port: number,
  urlPath: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTPS only', () => {
  let t: TestServer;
  let port: number;
  before(async () => {
    // Its own CA, made at this first start (the test below checks the files it wrote).
    t = await startTestServer({ MEDIAD_TRUST_PROXY: '127.0.0.1' }, { ownTls: true });
    port = Number(new URL(t.base).port);
  });
  after(() => t.stop());

  it('answers plain HTTP on the same port with a readable https_required error', async () => {
    const res = await plainRequest(port);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'https_required');
    assert.match(res.body.error.message, /https:\/\/localhost:\d+\/files\?page=1/);
    assert.equal(res.body.data, null);
  });

  it('serves plain HTTP only when a trusted proxy says the original request was HTTPS', async () => {
    const { key } = await t.key();
    const res = await plainRequest(port, { 'x-forwarded-proto': 'https', authorization: `Bearer ${key}` });
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.type, 'list');
    const spoofed = await plainRequest(port, { 'x-forwarded-proto': 'http', authorization: `Bearer ${key}` });
    assert.equal(spoofed.status, 400);
  });

  it('offers the local CA on plain HTTP and HTTPS, and a browser a page that says where mediad is and how to trust it', async () => {
    const pem = await fs.readFile(path.join(t.dataDir, 'tls', 'ca.crt'), 'utf8');
    const plain = await plainGet(port, '/ca.crt');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-type'], 'application/x-pem-file');
    assert.equal(plain.text, pem);
    const secure = await t.call('GET', '/ca.crt');
    assert.equal(secure.text, pem);
    const page = await plainGet(port, '/app/setup', { accept: 'text/html,application/xhtml+xml' });
    assert.equal(page.status, 400);
    assert.match(page.headers['content-type']!, /^text\/html/);
    assert.ok(page.text.includes(`href="https://localhost:${port}/app/setup"`), 'a link to the HTTPS address');
    assert.ok(page.text.includes(new X509Certificate(pem).fingerprint256), 'the CA fingerprint to check');
    assert.match(page.text, /certutil -d sql:\$HOME\/\.pki\/nssdb -A -t C,, -n mediad -i mediad-ca\.crt/);
    // API clients keep the JSON answer.
    assert.equal((await plainRequest(port)).body.error.code, 'https_required');
  });

  it('created a local CA and server certificate with private keys readable by the owner only', async () => {
    for (const name of ['ca.key', 'server.key']) {
      const st = await fs.stat(path.join(t.dataDir, 'tls', name));
      assert.equal(st.mode & 0o777, 0o600, name);
    }
    assert.equal(t.server.caCertPath, path.join(t.dataDir, 'tls', 'ca.crt'));
  });
});

describe('untrusted proxies', () => {
  it('refuses X-Forwarded-Proto from an address that is not a trusted proxy', async () => {
    const t = await startTestServer({ MEDIAD_TRUST_PROXY: '10.1.2.3' });
    try {
      const res = await plainRequest(Number(new URL(t.base).port), { 'x-forwarded-proto': 'https' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'https_required');
    } finally {
      await t.stop();
    }
  });
});

describe('configuration', () => {
  it('lists every problem at once', () => {
    assert.throws(
      () =>
        loadConfig({
          MEDIAD_PORT: 'x',
          MEDIAD_PUBLIC_URL: 'http://plain.example',
          MEDIAD_ALLOW_PRIVATE_URLS: 'maybe',
          MEDIAD_TLS_CERT: '/a.pem',
        }),
      (err: unknown) => err instanceof ConfigError && err.problems.length === 4,
    );
  });

  it('has working defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8443);
    assert.equal(c.publicUrl, 'https://localhost:8443');
    assert.equal(c.fetch.allowPrivate, false);
    assert.equal(c.database.dialect, 'sqlite');
  });
});

describe('mediad command', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-cli-'));
  });
  after(() => fs.rm(dataDir, { recursive: true, force: true }));
  const env = () => ({ ...process.env, MEDIAD_DATA_DIR: dataDir });

  it('keys create --json prints one JSON line; keys list never shows the key; revoke works', async () => {
    const { stdout } = await run(
      process.execPath,
      [...CLI, 'keys', 'create', '--org', 'o', '--project', 'p', '--json'],
      { env: env() },
    );
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    const created = JSON.parse(lines[0]!);
    assert.match(created.key, /^mdk_/);
    assert.match(created.org_id, /^org_/);
    assert.match(created.project_id, /^prj_/);
    const again = JSON.parse(
      (
        await run(process.execPath, [...CLI, 'keys', 'create', '--org', 'o', '--project', 'p', '--json'], {
          env: env(),
        })
      ).stdout,
    );
    assert.equal(again.project_id, created.project_id, 'the same org/project is reused');
    const list = (await run(process.execPath, [...CLI, 'keys', 'list'], { env: env() })).stdout;
    assert.ok(!list.includes(created.key));
    assert.match(list, /o\/p/);
    const revoked = (await run(process.execPath, [...CLI, 'keys', 'revoke', created.key_id], { env: env() })).stdout;
    assert.match(revoked, /revoked/);
  });

  it('explains itself and exits non-zero on bad configuration', async () => {
    const help = (await run(process.execPath, [...CLI, '--help'], { env: env() })).stdout;
    for (const cmd of ['serve', 'worker', 'migrate', 'keys']) assert.match(help, new RegExp(cmd));
    await assert.rejects(
      run(process.execPath, [...CLI, 'migrate'], { env: { ...env(), MEDIAD_PORT: 'nope' } }),
      (err: any) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr, /MEDIAD_PORT must be a whole number/);
        return true;
      },
    );
  });
});
