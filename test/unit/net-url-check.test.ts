// resolveAndCheck with an injected lookup: no DNS query and no connection is ever made.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAppError } from '../../src/errors.js';
import { isAllowedHost, parseFetchUrl, resolveAndCheck, type LookupFn } from '../../src/net/index.js';

const RECORDS: Record<string, string[]> = {
  'evil.test': ['169.254.169.254'],
  'rebind.test': ['1.2.3.4', '10.0.0.1'],
  'ok.test': ['93.184.216.34'],
  'dual.test': ['93.184.216.34', '2606:4700:4700::1111'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'internal.test': ['10.1.2.3'],
  'empty.test': [],
};

/** Fake resolver; throws ENOTFOUND for unknown names and records what it was asked. */
function fakeLookup(calls: string[] = []): LookupFn {
  return async (hostname) => {
    calls.push(hostname);
    const addrs = RECORDS[hostname];
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const STRICT = { allowPrivate: false, allowHosts: [] as string[] };

function expectCode(code: string, pattern?: RegExp) {
  return (err: unknown) => {
    assert.ok(isAppError(err), `expected AppError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (pattern) assert.match(err.message, pattern);
    return true;
  };
}

describe('parseFetchUrl', () => {
  it('accepts http and https URLs', () => {
    assert.equal(parseFetchUrl('http://example.com/a?b=1').href, 'http://example.com/a?b=1');
    assert.equal(parseFetchUrl('https://example.com').hostname, 'example.com');
  });

  for (const raw of [
    'ftp://example.com/x',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'gopher://x/',
  ]) {
    it(`refuses ${raw.split(':')[0]}: URLs`, () => {
      assert.throws(() => parseFetchUrl(raw), expectCode('source_refused', /only http: and https:/));
    });
  }

  it('refuses userinfo', () => {
    assert.throws(() => parseFetchUrl('http://user:pass@example.com/'), expectCode('source_refused', /credentials/));
    assert.throws(() => parseFetchUrl('http://user@example.com/'), expectCode('source_refused'));
  });

  it('rejects unparseable URLs and URLs without a host', () => {
    for (const raw of ['not a url', 'http://', 'https://:80/', '/relative/path', '']) {
      assert.throws(() => parseFetchUrl(raw), expectCode('bad_request'), raw);
    }
  });
});

describe('resolveAndCheck', () => {
  it('refuses a name that resolves to the metadata address', async () => {
    await assert.rejects(
      resolveAndCheck(new URL('http://evil.test/latest'), STRICT, fakeLookup()),
      expectCode(
        'source_refused',
        /evil\.test resolves to 169\.254\.169\.254, which is a link-local address; to trust it, add evil\.test:\d+ to MEDIAD_ALLOWED_URL_HOSTS \(or set MEDIAD_ALLOW_PRIVATE_URLS=true\) and restart mediad/,
      ),
    );
  });

  it('refuses a name when any one of its addresses is private', async () => {
    await assert.rejects(
      resolveAndCheck(new URL('http://rebind.test/'), STRICT, fakeLookup()),
      expectCode('source_refused', /10\.0\.0\.1, which is a private address/),
    );
  });

  it('refuses IPv4-mapped loopback answers', async () => {
    await assert.rejects(
      resolveAndCheck(new URL('http://mapped.test/'), STRICT, fakeLookup()),
      expectCode('source_refused', /loopback/),
    );
  });

  it('returns every vetted address for a public name', async () => {
    assert.deepEqual(await resolveAndCheck(new URL('http://ok.test/'), STRICT, fakeLookup()), [
      { address: '93.184.216.34', family: 4 },
    ]);
    assert.deepEqual(await resolveAndCheck(new URL('https://dual.test/'), STRICT, fakeLookup()), [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
  });

  it('checks IP literals without any lookup', async () => {
    const calls: string[] = [];
    await assert.rejects(
      resolveAndCheck(new URL('http://10.0.0.1/'), STRICT, fakeLookup(calls)),
      expectCode('source_refused', /^refusing to fetch http:\/\/10\.0\.0\.1\/: 10\.0\.0\.1 is a private address/),
    );
    await assert.rejects(
      resolveAndCheck(new URL('http://[::1]:8080/'), STRICT, fakeLookup(calls)),
      expectCode('source_refused', /::1 is a loopback/),
    );
    await assert.rejects(
      resolveAndCheck(new URL('http://[::ffff:169.254.169.254]/'), STRICT, fakeLookup(calls)),
      expectCode('source_refused'),
    );
    // WHATWG URL normalises odd IPv4 spellings to dotted quads before we see them
    await assert.rejects(
      resolveAndCheck(new URL('http://2130706433/'), STRICT, fakeLookup(calls)),
      expectCode('source_refused', /127\.0\.0\.1/),
    );
    await assert.rejects(
      resolveAndCheck(new URL('http://0x7f.1/'), STRICT, fakeLookup(calls)),
      expectCode('source_refused', /127\.0\.0\.1/),
    );
    assert.deepEqual(await resolveAndCheck(new URL('http://[2606:4700:4700::1111]/'), STRICT, fakeLookup(calls)), [
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
    assert.deepEqual(calls, []);
  });

  it('does not echo the query string in refusals', async () => {
    await assert.rejects(
      resolveAndCheck(new URL('http://10.0.0.1/x?token=secret'), STRICT, fakeLookup()),
      (err: Error) => {
        assert.doesNotMatch(err.message, /secret/);
        return true;
      },
    );
  });

  it('maps resolution failures to source_unreachable', async () => {
    await assert.rejects(
      resolveAndCheck(new URL('http://nowhere.test/'), STRICT, fakeLookup()),
      expectCode('source_unreachable', /ENOTFOUND/),
    );
    await assert.rejects(
      resolveAndCheck(new URL('http://empty.test/'), STRICT, fakeLookup()),
      expectCode('source_unreachable'),
    );
  });

  it('allowPrivate allows everything', async () => {
    const open = { allowPrivate: true, allowHosts: [] };
    assert.deepEqual(await resolveAndCheck(new URL('http://evil.test/'), open, fakeLookup()), [
      { address: '169.254.169.254', family: 4 },
    ]);
    assert.equal((await resolveAndCheck(new URL('http://127.0.0.1/'), open, fakeLookup())).length, 1);
  });

  it('allowHosts bypasses classification for exactly the listed host or host:port', async () => {
    const trusted = { allowPrivate: false, allowHosts: ['internal.test:8080', '10.9.9.9', '[fd00::1]:443'] };
    const lookup = fakeLookup();
    assert.deepEqual(await resolveAndCheck(new URL('http://internal.test:8080/x'), trusted, lookup), [
      { address: '10.1.2.3', family: 4 },
    ]);
    await assert.rejects(
      resolveAndCheck(new URL('http://internal.test:8081/x'), trusted, lookup),
      expectCode('source_refused'),
    );
    await assert.rejects(
      resolveAndCheck(new URL('http://internal.test/x'), trusted, lookup),
      expectCode('source_refused'),
    );
    assert.equal((await resolveAndCheck(new URL('http://10.9.9.9:1234/'), trusted, lookup)).length, 1);
    assert.equal((await resolveAndCheck(new URL('https://[fd00::1]/'), trusted, lookup)).length, 1);
    await assert.rejects(resolveAndCheck(new URL('http://[fd00::1]/'), trusted, lookup), expectCode('source_refused'));
    // the bypass is per host: other private hosts stay refused
    await assert.rejects(
      resolveAndCheck(new URL('http://evil.test:8080/'), trusted, lookup),
      expectCode('source_refused'),
    );
  });
});

describe('isAllowedHost', () => {
  it('matches default ports, case and a trailing dot', () => {
    assert.ok(isAllowedHost(new URL('https://Media.Internal./'), ['media.internal:443']));
    assert.ok(isAllowedHost(new URL('http://media.internal/'), ['MEDIA.INTERNAL:80']));
    assert.ok(!isAllowedHost(new URL('http://media.internal/'), ['media.internal:443']));
    assert.ok(isAllowedHost(new URL('http://[::1]:9000/'), ['::1']));
    assert.ok(!isAllowedHost(new URL('http://media.internal.evil.test/'), ['media.internal']));
    assert.ok(!isAllowedHost(new URL('http://x.test/'), ['not a host', '']));
  });
});
