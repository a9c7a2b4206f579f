import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile, unlink, chmod } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { issueServerCert } from '../../src/tls/cert-builder.js';
import { normalizeTlsHosts } from '../../src/tls/hosts.js';
import { ensureLocalTls, trustInstructions, type LocalTls } from '../../src/tls/local-ca.js';

const DAY = 24 * 60 * 60 * 1000;

describe('local TLS', () => {
  let dir: string;
  let first: LocalTls;
  const logs: string[] = [];

  before(async () => {
    dir = path.join(await mkdtemp(path.join(tmpdir(), 'mediad-tls-')), 'tls');
    first = await ensureLocalTls({ dir, hosts: ['media.example.test', '192.0.2.10'], log: (m) => logs.push(m) });
  });
  after(() => rm(path.dirname(dir), { recursive: true, force: true }));

  const caCert = async () => new X509Certificate(await readFile(path.join(dir, 'ca.crt')));

  it('creates a CA and a server cert with private files', async () => {
    assert.equal(first.created, true);
    assert.equal(first.caCertPath, path.join(dir, 'ca.crt'));
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    for (const key of ['ca.key', 'server.key'])
      assert.equal((await stat(path.join(dir, key))).mode & 0o777, 0o600, key);
    assert.equal(await readFile(path.join(dir, 'server.crt'), 'utf8'), first.cert);
    assert.ok(logs.some((l) => l.includes('created local CA')));
  });

  it('CA: self-signed, cA, 10 years, named after the host', async () => {
    const ca = await caCert();
    assert.equal(ca.ca, true);
    assert.ok(ca.checkIssued(ca) && ca.verify(ca.publicKey));
    assert.match(ca.subject, /CN=mediad local CA \(/);
    const years = (Date.parse(ca.validTo) - Date.now()) / (365 * DAY);
    assert.ok(years > 9.9 && years < 10.1, `CA valid ${years} years`);
    const forge = (await import('node-forge')).default;
    const parsed = forge.pki.certificateFromPem(await readFile(path.join(dir, 'ca.crt'), 'utf8'));
    const bc = parsed.getExtension('basicConstraints') as { cA: boolean; critical: boolean };
    const ku = parsed.getExtension('keyUsage') as Record<string, boolean>;
    assert.ok(bc.cA && bc.critical);
    assert.ok(ku.keyCertSign && ku.cRLSign && !ku.digitalSignature);
  });

  it('server cert chains to the CA and covers the requested names', async () => {
    const ca = await caCert();
    const leaf = new X509Certificate(first.cert);
    assert.equal(leaf.ca, false);
    assert.ok(leaf.checkIssued(ca));
    assert.ok(leaf.verify(ca.publicKey));
    assert.equal(leaf.checkHost('localhost'), 'localhost');
    assert.equal(leaf.checkHost('media.example.test'), 'media.example.test');
    assert.equal(leaf.checkHost('other.example.test'), undefined);
    assert.equal(leaf.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(leaf.checkIP('::1'), '::1');
    assert.equal(leaf.checkIP('192.0.2.10'), '192.0.2.10');
    assert.ok(leaf.checkPrivateKey(await import('node:crypto').then((c) => c.createPrivateKey(first.key))));
    assert.deepEqual(leaf.keyUsage, ['1.3.6.1.5.5.7.3.1']); // extKeyUsage serverAuth
    const days = (Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)) / DAY;
    assert.ok(days <= 825, `server cert valid ${days} days`);
    assert.notEqual(leaf.serialNumber, ca.serialNumber);
    assert.ok(/^[0-7]/.test(leaf.serialNumber), 'serial is positive');
  });

  it('serves HTTPS that a client trusting only the CA accepts', async () => {
    const server = https.createServer({ cert: first.cert, key: first.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const ca = await readFile(first.caCertPath);
    try {
      assert.equal(await get({ port, ca, servername: 'localhost' }), 'ok');
      assert.equal(await get({ port, ca }), 'ok'); // IP SAN 127.0.0.1
      await assert.rejects(get({ port, servername: 'localhost' }), /unable to verify|self.signed|UNABLE_TO_VERIFY/i);
      await assert.rejects(get({ port, ca, servername: 'evil.example' }), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reuses everything on the next call', async () => {
    const before = (await caCert()).fingerprint256;
    const again = await ensureLocalTls({ dir, hosts: ['MEDIA.example.test.', '192.0.2.10'] });
    assert.equal(again.created, false);
    assert.equal(again.cert, first.cert);
    assert.equal(again.key, first.key);
    assert.equal((await caCert()).fingerprint256, before);
  });

  it('reissues only the server cert for a new host, keeping the CA', async () => {
    const before = (await caCert()).fingerprint256;
    const next = await ensureLocalTls({ dir, hosts: ['media.example.test', 'new.example.test'] });
    assert.equal(next.created, true);
    assert.equal((await caCert()).fingerprint256, before);
    const leaf = new X509Certificate(next.cert);
    assert.equal(leaf.checkHost('new.example.test'), 'new.example.test');
    assert.ok(leaf.verify((await caCert()).publicKey));
    assert.equal(
      (await ensureLocalTls({ dir, hosts: ['new.example.test'] })).created,
      false,
      'a subset is still covered',
    );
  });

  it('reissues a server cert that expires within 30 days', async () => {
    const ca = {
      certPem: await readFile(path.join(dir, 'ca.crt'), 'utf8'),
      keyPem: await readFile(path.join(dir, 'ca.key'), 'utf8'),
    };
    const short = await issueServerCert(ca, normalizeTlsHosts([]), { days: 10 });
    await writeFile(path.join(dir, 'server.crt'), short.certPem);
    await writeFile(path.join(dir, 'server.key'), short.keyPem);
    const msgs: string[] = [];
    const next = await ensureLocalTls({ dir, hosts: [], log: (m) => msgs.push(m) });
    assert.equal(next.created, true);
    assert.ok(
      msgs.some((m) => m.includes('expires')),
      msgs.join('\n'),
    );
    assert.ok(Date.parse(new X509Certificate(next.cert).validTo) - Date.now() > 800 * DAY);
  });

  it('repairs a lost server key and tightens loose key permissions', async () => {
    await unlink(path.join(dir, 'server.key'));
    assert.equal((await ensureLocalTls({ dir, hosts: [] })).created, true);
    await chmod(path.join(dir, 'ca.key'), 0o644);
    assert.equal((await ensureLocalTls({ dir, hosts: [] })).created, false);
    assert.equal((await stat(path.join(dir, 'ca.key'))).mode & 0o777, 0o600);
  });

  it('makes a new CA when the CA key is gone', async () => {
    const before = (await caCert()).fingerprint256;
    await unlink(path.join(dir, 'ca.key'));
    const next = await ensureLocalTls({ dir, hosts: [] });
    assert.equal(next.created, true);
    assert.notEqual((await caCert()).fingerprint256, before);
    assert.ok(new X509Certificate(next.cert).verify((await caCert()).publicKey));
  });

  it('refuses hosts that are neither DNS names nor IPs', async () => {
    await assert.rejects(ensureLocalTls({ dir, hosts: ['bad host'] }), /not a valid DNS name/);
    await assert.rejects(ensureLocalTls({ dir, hosts: ['fe80::1%eth0'] }), /IPv6/);
  });
});

describe('normalizeTlsHosts', () => {
  it('always adds the loopback names and canonicalises', () => {
    assert.deepEqual(
      normalizeTlsHosts(['Media.Example.TEST.', '[0:0:0:0:0:0:0:1]', '10.0.0.1', '*.Apps.test', 'bücher.test']),
      {
        dns: ['localhost', 'media.example.test', '*.apps.test', 'xn--bcher-kva.test'],
        ips: ['127.0.0.1', '::1', '10.0.0.1'],
      },
    );
  });
});

describe('trustInstructions', () => {
  it('names the CA file for Node, curl and the Debian store', () => {
    const text = trustInstructions('/var/lib/mediad/tls/ca.crt');
    assert.match(text, /NODE_EXTRA_CA_CERTS=\/var\/lib\/mediad\/tls\/ca\.crt/);
    assert.match(text, /curl --cacert \/var\/lib\/mediad\/tls\/ca\.crt https:\/\/localhost:8443\/health/);
    assert.match(
      text,
      /cp \/var\/lib\/mediad\/tls\/ca\.crt \/usr\/local\/share\/ca-certificates\/mediad-local-ca\.crt && update-ca-certificates/,
    );
    assert.match(trustInstructions('/srv/my data/ca.crt'), /--cacert '\/srv\/my data\/ca\.crt'/);
    assert.match(
      trustInstructions('/x/ca.crt', 'https://media.example.test/'),
      /--cacert \/x\/ca\.crt https:\/\/media\.example\.test\/health$/m,
    );
  });
});

function get(opts: { port: number; ca?: Buffer; servername?: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', path: '/health', agent: false, ...opts }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
  });
}
