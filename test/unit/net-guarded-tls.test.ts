// HTTPS through the pinned connector, loopback only: SNI carries the host name while the
// socket goes to the vetted address, and TLS failures become source_unreachable.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import forge from 'node-forge';
import { isAppError } from '../../src/errors.js';
import { createGuardedClient, type LookupFn } from '../../src/net/index.js';

function selfSigned(name: string): { key: string; cert: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 3_600_000);
  cert.setSubject([{ name: 'commonName', value: name }]);
  cert.setIssuer([{ name: 'commonName', value: name }]);
  cert.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 2, value: name }] }]);
  cert.sign(forge.pki.privateKeyFromPem(key), forge.md.sha256.create());
  return { key, cert: forge.pki.certificateToPem(cert) };
}

let server: https.Server;
let port: number;
const sniSeen: string[] = [];
let requests = 0;

before(async () => {
  const { key, cert } = selfSigned('localhost');
  server = https.createServer(
    { key, cert, SNICallback: (name, cb) => (sniSeen.push(name), cb(null, undefined)) },
    (_req, res) => (requests++, res.end('ok')),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

it('connects over TLS to the vetted address with SNI = host name, and maps an untrusted cert to source_unreachable', async () => {
  const calls: string[] = [];
  const lookup: LookupFn = async (hostname) => {
    calls.push(hostname);
    if (hostname !== 'localhost') throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    return [{ address: '127.0.0.1', family: 4 }];
  };
  const client = createGuardedClient(
    {
      allowPrivate: false,
      allowHosts: [`localhost:${port}`],
      maxRedirects: 3,
      connectTimeoutMs: 2000,
      idleTimeoutMs: 2000,
      totalTimeoutMs: 5000,
      maxBytes: 1024,
      userAgent: 'mediad-test/1',
    },
    { lookup },
  );
  await assert.rejects(client.request(`https://localhost:${port}/`), (err: unknown) => {
    assert.ok(isAppError(err));
    assert.equal(err.code, 'source_unreachable');
    assert.match(err.message, /^could not fetch https:\/\/localhost:\d+\/: the TLS certificate is self-signed$/);
    return true;
  });
  assert.deepEqual(sniSeen, ['localhost']);
  assert.deepEqual(calls, ['localhost', 'localhost']);
  assert.equal(requests, 0);
  await client.close();
});
