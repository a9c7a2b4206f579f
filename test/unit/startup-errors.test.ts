import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { explainStartupError } from '../../src/startup-errors.js';

// Start-up failures in words (issue 21): each names what failed, the variable to check and what
// to do. The busy port and the refused PostgreSQL run for real in test/api/cli-first-hour.test.ts
// (and an unwritable data dir was seen as a non-root user); here, every kind the module knows.

const sysError = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${code}: something`), { code, ...extra });

describe('explainStartupError', () => {
  const sqlite = loadConfig({ MEDIAD_DATA_DIR: '/srv/mediad' });
  const pg = loadConfig({
    MEDIAD_DATA_DIR: '/srv/mediad',
    MEDIAD_DATABASE_URL: 'postgres://u:p@db.internal:5433/media',
  });

  it('an unwritable data dir names MEDIAD_DATA_DIR', () => {
    const why = explainStartupError(sysError('EACCES', { path: '/srv/mediad/tls', syscall: 'mkdir' }), sqlite);
    assert.match(
      why!,
      /cannot write its data directory \/srv\/mediad \(\/srv\/mediad\/tls\) \(EACCES\).*MEDIAD_DATA_DIR/,
    );
  });

  it('a busy or privileged port names MEDIAD_PORT; a foreign address MEDIAD_HOST', () => {
    assert.match(explainStartupError(sysError('EADDRINUSE', { syscall: 'listen' }), sqlite)!, /MEDIAD_PORT/);
    assert.match(explainStartupError(sysError('EACCES', { syscall: 'listen' }), sqlite)!, /below 1024.*MEDIAD_PORT/);
    assert.match(explainStartupError(sysError('EADDRNOTAVAIL', { syscall: 'listen' }), sqlite)!, /MEDIAD_HOST/);
  });

  it('PostgreSQL: unreachable, wrong password, no such database, through migrate()’s wrapping', () => {
    const wrapped = (inner: Error) => new Error(`database migration failed: ${inner.message}`, { cause: inner });
    assert.match(
      explainStartupError(wrapped(sysError('ECONNREFUSED')), pg)!,
      /cannot reach PostgreSQL at db\.internal:5433\/media \(ECONNREFUSED\): check MEDIAD_DATABASE_URL/,
    );
    assert.match(explainStartupError(wrapped(sysError('28P01')), pg)!, /credentials in MEDIAD_DATABASE_URL/);
    assert.match(explainStartupError(wrapped(sysError('3D000')), pg)!, /does not exist/);
  });

  it('a full disk, an unopenable SQLite file, unreadable or mismatched TLS files', () => {
    assert.match(explainStartupError(sysError('ENOSPC', { path: '/srv/mediad/mediad.db' }), sqlite)!, /full/);
    assert.match(explainStartupError(sysError('SQLITE_CANTOPEN'), sqlite)!, /MEDIAD_DATA_DIR/);
    const tls = loadConfig({ MEDIAD_TLS_CERT: '/etc/ssl/m.pem', MEDIAD_TLS_KEY: '/etc/ssl/m.key' });
    assert.match(
      explainStartupError(sysError('ENOENT', { path: '/etc/ssl/m.pem' }), tls)!,
      /cannot read \/etc\/ssl\/m\.pem.*MEDIAD_TLS_CERT/,
    );
    assert.match(
      explainStartupError(new Error('error:0480006C:PEM routines::no start line'), tls)!,
      /not a matching PEM certificate and private key/,
    );
  });

  it('leaves other errors to their own message', () => {
    assert.equal(explainStartupError(new Error('something else'), sqlite), null);
  });
});
