import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { freePort, startTestServer, type TestServer } from '../helpers/server.js';
import { BUILT, MEDIAD, ROOT } from '../helpers/paths.js';

// The mediad command in a new user's first hour (issue 21): --version, `upload`, `tls trust`,
// `doctor` checking the whole install, start-up failures said in words, and the first-run
// messages as readable text on a terminal and JSON lines into a pipe. Each runs the real
// command as a process.

const run = promisify(execFile);
const CLI = MEDIAD;
const PACKAGE = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
};

/** `mediad …` to its end: exit code and output, whatever the code. */
async function mediad(args: string[], env: Record<string, string>, timeout = 120_000) {
  try {
    const { stdout, stderr } = await run(process.execPath, [...CLI, ...args], {
      env: { ...process.env, MEDIAD_LOG_LEVEL: 'warn', ...env },
      timeout,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

let t: TestServer;
let scratch: string;

before(async () => {
  t = await startTestServer({ MEDIAD_WORKER_CONCURRENCY: '0' });
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-cli-'));
});
after(async () => {
  await t.stop();
  await fs.rm(scratch, { recursive: true, force: true });
});

describe('mediad --version', () => {
  it('says the one version of package.json, and Node’s', async () => {
    const { code, stdout } = await mediad(['--version'], {});
    assert.equal(code, 0);
    assert.equal(
      stdout.trim(),
      `mediad ${PACKAGE.version} (Node ${process.version}; mediad supports Node ${PACKAGE.engines.node})`,
    );
    const system = await t.call('GET', '/system', { key: (await t.key()).key });
    assert.equal(system.json.data.version, PACKAGE.version, 'GET /system says the same');
    assert.equal((await t.call('GET', '/openapi.json')).json.info.version, PACKAGE.version, 'and /openapi.json');
  });
});

describe('mediad upload', () => {
  it('uploads a local file with the key from MEDIAD_API_KEY and says what to run next', async () => {
    const { key } = await t.key('upload', 'cli');
    const file = path.join(scratch, 'photo.png');
    await run('ffmpeg', [
      '-loglevel',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=64x48',
      '-frames:v',
      '1',
      file,
    ]);
    const env = {
      MEDIAD_API_KEY: key,
      MEDIAD_DATA_DIR: t.dataDir,
      MEDIAD_PUBLIC_URL: t.base,
    };
    const first = await mediad(['upload', file, '--folder', 'cli'], env);
    assert.equal(first.code, 0, first.stderr);
    const id = /uploaded .*photo\.png: (file_\w+) \(image\/png, 64×48\) in media med_\w+/.exec(first.stdout)?.[1];
    assert.ok(id, first.stdout);
    assert.match(first.stdout, /"kind": "image", "file_id": "file_\w+"/);
    const stored = await t.call('GET', `/files/${id}`, { key });
    assert.equal(stored.json.data.folder, 'cli');
    // The same name again: a readable refusal naming the way out, no stack trace.
    const again = await mediad(['upload', file, '--folder', 'cli'], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^mediad: .*already exists.*pass --filename/);
    assert.ok(!again.stderr.includes('    at '), 'no stack trace');
    const noKey = await mediad(['upload', file], { ...env, MEDIAD_API_KEY: '' });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /set MEDIAD_API_KEY/);
  });
});

describe('mediad tls trust', () => {
  it('adds the local CA to the Chromium NSS database and each Firefox profile of $HOME, and says what it left', async () => {
    const home = path.join(scratch, 'home');
    const firefox = path.join(home, '.mozilla/firefox/abc.default-release');
    await fs.mkdir(firefox, { recursive: true });
    await run('certutil', ['-d', `sql:${firefox}`, '-N', '--empty-password']);
    const out = await mediad(['tls', 'trust', '--no-system'], { HOME: home, MEDIAD_DATA_DIR: t.dataDir });
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.match(out.stdout, /done\s+Chrome, Chromium, Edge \(NSS\): added to .*\.pki\/nssdb/);
    assert.match(out.stdout, /done\s+Firefox \(abc\.default-release\)/);
    assert.match(out.stdout, /not done\s+system store: left alone/);
    for (const db of [path.join(home, '.pki/nssdb'), firefox]) {
      const listed = await run('certutil', ['-d', `sql:${db}`, '-L']);
      assert.match(listed.stdout, /mediad local CA [0-9A-F]{12}\s+C,,/, db);
    }
  });
});

/** The PostgreSQL server's autovacuum setting, as the doctor reads it (with track_counts). */
async function autovacuum(url: string): Promise<'on' | 'off'> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ on: boolean }>(
      "select current_setting('autovacuum') = 'on' and current_setting('track_counts') = 'on' as on",
    );
    return rows[0]!.on ? 'on' : 'off';
  } finally {
    await c.end();
  }
}

describe('mediad doctor', () => {
  it('checks the whole install: Node, data dir, database, TLS, port, FFmpeg; a port held by another program is a problem', async () => {
    const port = await freePort();
    const env = {
      MEDIAD_DATA_DIR: t.dataDir,
      MEDIAD_PORT: String(port),
      MEDIAD_HOST: '127.0.0.1',
      // The server's own database: its SQLite file, or the suite's PostgreSQL one.
      ...(t.databaseUrl ? { MEDIAD_DATABASE_URL: t.databaseUrl } : {}),
    };
    const good = await mediad(['doctor', '--json'], env);
    const report = JSON.parse(good.stdout);
    const states = Object.fromEntries(report.install.map((c: any) => [c.check, c.state]));
    // A PostgreSQL server without autovacuum (as some machines' are) is a warning that says what to set.
    const vacuum = t.databaseUrl ? await autovacuum(t.databaseUrl) : 'on';
    const database = report.install.find((c: any) => c.check === 'database');
    if (vacuum === 'off') assert.match(database.detail, /autovacuum is off.*set autovacuum = on in postgresql\.conf/);
    else assert.doesNotMatch(database.detail, /autovacuum/);
    assert.deepEqual(states, {
      node: 'ok',
      'data dir': 'ok',
      database: vacuum === 'off' ? 'warning' : 'ok',
      'tls (local CA)': 'ok',
      'tls CA': 'ok',
      port: 'ok',
      'ffmpeg encoders': 'ok',
      'ffmpeg filters': 'ok',
    });
    assert.equal(good.code, 0, JSON.stringify(report.problems));
    // Another program on the port: a problem that names MEDIAD_PORT; exit 1.
    const squatter = net.createServer().listen(port, '127.0.0.1');
    try {
      const busy = await mediad(['doctor', '--json'], env);
      assert.equal(busy.code, 1);
      assert.match(
        JSON.parse(busy.stdout).problems.join('\n'),
        /port: port \d+ on 127\.0\.0\.1 is already in use.*MEDIAD_PORT/,
      );
    } finally {
      squatter.close();
    }
  });
});

describe('start-up failures', () => {
  it('name the variable to check: a busy port, an unreachable PostgreSQL', async () => {
    const dataDir = path.join(scratch, 'start');
    const port = await freePort();
    const squatter = net.createServer().listen(port, '127.0.0.1');
    try {
      const busy = await mediad(['serve'], {
        MEDIAD_DATA_DIR: dataDir,
        MEDIAD_HOST: '127.0.0.1',
        MEDIAD_PORT: String(port),
      });
      assert.equal(busy.code, 1);
      assert.match(busy.stderr, /^mediad: port \d+ on 127\.0\.0\.1 is already in use \(EADDRINUSE\).*MEDIAD_PORT/m);
    } finally {
      squatter.close();
    }
    const closed = await freePort();
    const pg = await mediad(['serve'], {
      MEDIAD_DATA_DIR: dataDir,
      MEDIAD_PORT: String(port),
      MEDIAD_DATABASE_URL: `postgres://mediad@127.0.0.1:${closed}/mediad`,
    });
    assert.equal(pg.code, 1);
    assert.match(
      pg.stderr,
      /mediad cannot reach PostgreSQL at 127\.0\.0\.1:\d+\/mediad \(ECONNREFUSED\): check MEDIAD_DATABASE_URL/,
    );
    for (const out of [pg.stderr]) assert.ok(!out.includes('    at '), 'no stack trace');
  });
});

describe('a failed start releases what it opened', () => {
  it('startServer on a busy port rejects with EADDRINUSE, and a caller that catches it still exits', async () => {
    const port = await freePort();
    const squatter = net.createServer().listen(port, '127.0.0.1');
    const dataDir = path.join(scratch, 'busy-in-process');
    const src = (file: string) => path.join(ROOT, BUILT ? 'dist/src' : 'src', BUILT ? `${file}.js` : `${file}.ts`);
    // The child catches the error and does not call process.exit: it ends only if the runtime,
    // its database and timers were closed (they kept a test file's process alive in CI).
    const script = `
      import { loadConfig } from ${JSON.stringify(src('config'))};
      import { startServer } from ${JSON.stringify(src('server'))};
      const config = loadConfig({ ...process.env, MEDIAD_DATA_DIR: ${JSON.stringify(dataDir)}, MEDIAD_HOST: '127.0.0.1',
        MEDIAD_PORT: '${port}', MEDIAD_LOG_LEVEL: 'silent' });
      await startServer(config).then(() => console.log('listening'), (err) => console.log('refused', err.code));`;
    try {
      const loader = MEDIAD.slice(0, -1);
      const { stdout } = await run(process.execPath, [...loader, '--input-type=module', '-e', script], {
        timeout: 60_000,
      });
      assert.equal(stdout.trim(), 'refused EADDRINUSE');
    } finally {
      squatter.close();
    }
  });
});

describe('first-run messages', () => {
  /** `mediad serve` until it has printed the setup link; its whole output then. */
  function serveUntilSetup(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`no setup link within 60 s:\n${out}`));
      }, 60_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        // The whole message: its JSON line, or the block's closing rule on a terminal.
        const whole = /"setupUrl":"[^\n]*\n/.test(out) || /setup#token=[\s\S]*─{10}/.test(out);
        if (whole) {
          clearTimeout(timer);
          child.kill('SIGTERM');
          child.once('exit', () => resolve(out));
        }
      });
    });
  }

  it('are JSON lines into a pipe, and plain readable text on a terminal', async () => {
    const base = { MEDIAD_HOST: '127.0.0.1', MEDIAD_LOG_LEVEL: 'info' };
    const piped = await serveUntilSetup(process.execPath, [...CLI, 'serve'], {
      ...base,
      MEDIAD_DATA_DIR: path.join(scratch, 'pipe'),
      MEDIAD_PORT: String(await freePort()),
    });
    const records = piped
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const setup = records.find((r) => r.setupUrl);
    assert.match(setup.setupUrl, /^https:\/\/localhost:\d+\/app\/setup#token=/);
    const tls = records.find((r) => r.banner === 'tls');
    assert.ok(tls.steps.some((s: string) => s.includes('certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n mediad -i')));
    assert.ok(!records.some((r) => String(r.msg).includes('\n')), 'no message with literal line breaks');

    // A terminal: `script` gives the process a pseudo-terminal of its own.
    const port = await freePort();
    const command = `${process.execPath} ${CLI.join(' ')} serve`;
    const shown = await serveUntilSetup('script', ['-qfec', command, '/dev/null'], {
      ...base,
      MEDIAD_DATA_DIR: path.join(scratch, 'tty'),
      MEDIAD_PORT: String(port),
    });
    assert.ok(!shown.includes('{"level"'), 'no JSON on a terminal');
    assert.match(
      shown,
      /\d\d:\d\d:\d\d INFO {2}mediad is listening {2}url=https:\/\/127\.0\.0\.1:\d+ publicUrl=https:\/\/localhost:\d+/,
    );
    assert.match(
      shown,
      /mediad is not set up yet: open the setup link\r?\n\r?\n {2}https:\/\/localhost:\d+\/app\/setup#token=\S+/,
    );
    assert.match(
      shown,
      / {2}Chrome, Chromium, Edge on Linux: {2}mkdir -p \$HOME\/\.pki\/nssdb && certutil -d sql:\$HOME\/\.pki\/nssdb -A -t C,, -n mediad -i /,
    );
    assert.match(shown, /Set MEDIAD_PUBLIC_URL=https:\/\/<that address>:\d+ and restart/);
  });
});
