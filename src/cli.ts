#!/usr/bin/env -S node --max-semi-space-size=32
// The young generation is doubled (semi-spaces of 32 MB, V8's default is 16): under load the
// objects of requests still in flight survive a collection that comes too soon and are copied
// twice and promoted, and on GET /files at 64 connections the extra collections doubled the
// p99 (bench/api-files.ts). npm start, the Dockerfile and the systemd units run this file
// directly, so this line is the one place the flag is set (npm run build makes it executable).
import { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrate, openDatabase, type Db } from './db/connect.js';
import { systemClock } from './deps.js';
import { createKey, listKeys, revokeKey } from './services/keys.js';
import { startServer, startWorker } from './server.js';
import { createRuntime } from './runtime.js';
import { reconcileBlobs } from './services/blob-reconcile.js';
import { doctor, formatDoctor } from './doctor.js';

// The mediad command. Every subcommand reads the same environment (see README).

function config(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(
        `mediad: ${err.message}\nFix the variables above (see the Configuration section of the README) and start again.\n`,
      );
      process.exit(2);
    }
    throw err;
  }
}

/** Opens the database, brings it up to date (the migrate command does that itself), runs `fn`. */
async function withDb<T>(fn: (db: Db) => Promise<T>, migrateFirst = true): Promise<T> {
  const database = openDatabase(config().database);
  try {
    if (migrateFirst) await migrate(database.db);
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

const program = new Command('mediad')
  .description('Self-hostable media processing service: an HTTPS JSON API to store media and derive files from it.')
  .showHelpAfterError('(run "mediad --help" for the list of commands)');

program
  .command('serve')
  .description(
    'Start the HTTPS API and file delivery (what `npm start` runs). Configured by MEDIAD_* environment variables.',
  )
  .action(async () => {
    const server = await startServer(config());
    const stop = (signal: string) => {
      server.app.log.info({ signal }, 'shutting down: finishing requests in flight');
      server.close().then(
        () => process.exit(0),
        (err: unknown) => {
          server.app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });

program
  .command('worker')
  .description(
    'Run task workers only (no HTTP). Start as many as you like beside `serve`; they share its data dir and database.',
  )
  .action(async () => {
    const worker = await startWorker(config());
    const stop = () => {
      worker.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });

program
  .command('migrate')
  .description('Apply database migrations and exit (serve also does this at start).')
  .action(async () => {
    const applied = await withDb((db) => migrate(db), false);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  });

const keys = program.command('keys').description('Create, list and revoke API keys.');

keys
  .command('create')
  .description('Create an API key for a project (the org and project are created when missing). The key is shown once.')
  .requiredOption('--org <name>', 'organisation name')
  .requiredOption('--project <name>', 'project name')
  .option('--name <label>', 'a label to recognise the key by')
  .option('--json', 'print one JSON line {"key","org_id","project_id"}')
  .action(async (opts: { org: string; project: string; name?: string; json?: boolean }) => {
    const created = await withDb((db) => createKey({ db, clock: systemClock }, opts.org, opts.project, opts.name));
    if (opts.json) {
      process.stdout.write(
        `${JSON.stringify({ key: created.key, org_id: created.org_id, project_id: created.project_id, key_id: created.key_id })}\n`,
      );
      return;
    }
    const base = config().publicUrl;
    process.stdout.write(
      [
        `API key for ${opts.org}/${opts.project} (${created.project_id}):`,
        '',
        `  ${created.key}`,
        '',
        'It is shown only now; mediad stores only its hash. Use it as a bearer token:',
        '',
        `  curl --cacert ${config().dataDir}/tls/ca.crt -H "Authorization: Bearer ${created.key}" ${base}/files`,
        '',
        `Revoke it with: mediad keys revoke ${created.key_id}`,
        '',
      ].join('\n'),
    );
  });

keys
  .command('list')
  .description('List keys (never the keys themselves: their id, hint and project).')
  .option('--json', 'print JSON')
  .action(async (opts: { json?: boolean }) => {
    const rows = await withDb((db) => listKeys({ db }));
    if (opts.json) return void process.stdout.write(`${JSON.stringify(rows)}\n`);
    if (rows.length === 0)
      return void process.stdout.write(
        'no keys yet: create one with `mediad keys create --org <name> --project <name>`\n',
      );
    for (const r of rows) {
      process.stdout.write(
        `${r.key_id}  ${r.hint}  ${r.org}/${r.project}  created ${r.created}${r.revoked ? `  REVOKED ${r.revoked}` : ''}${r.name ? `  "${r.name}"` : ''}\n`,
      );
    }
  });

keys
  .command('revoke')
  .description('Revoke a key by its id (key_…); requests with it fail from then on.')
  .argument('<key_id>', 'the key id shown by `mediad keys list`')
  .action(async (keyId: string) => {
    const ok = await withDb((db) => revokeKey({ db, clock: systemClock }, keyId));
    if (!ok) {
      process.stderr.write(`mediad: no active key ${keyId}; see \`mediad keys list\`\n`);
      process.exit(1);
    }
    process.stdout.write(`revoked ${keyId}\n`);
  });

program
  .command('blobs')
  .description('Storage upkeep.')
  .command('sweep')
  .description(
    'Delete stored blobs that no file references (left by crashes before the blob journal existed). A blob a file references is never deleted.',
  )
  .option('--dry-run', 'list what would be deleted, delete nothing')
  .option('--older-than-hours <n>', 'only blobs older than this (a younger one may be a write in progress)', '1')
  .action(async (opts: { dryRun?: boolean; olderThanHours: string }) => {
    const hours = Number(opts.olderThanHours);
    if (!(hours >= 0)) {
      process.stderr.write('mediad: --older-than-hours must be a number of hours, e.g. 1\n');
      process.exit(2);
    }
    const runtime = await createRuntime(config());
    try {
      const report = await reconcileBlobs(runtime.deps, {
        dryRun: opts.dryRun === true,
        olderThanMs: hours * 3600_000,
      });
      for (const key of report.orphans) process.stdout.write(`${opts.dryRun ? 'would delete' : 'deleted'} ${key}\n`);
      process.stdout.write(
        `scanned ${report.scanned} blobs: ${report.orphans.length} unreferenced ${opts.dryRun ? 'to delete (dry run: nothing deleted)' : 'deleted'}, ${report.recent} unreferenced but recent kept\n`,
      );
    } finally {
      await runtime.close();
    }
  });

program
  .command('doctor')
  .description(
    'Check the intelligence engines: local ones (found, version, model) and the configured AI provider (reachable, the models it lists), and which engine each kind uses. Exits 1 when something configured or installed is broken.',
  )
  .option('--json', 'print the report as JSON')
  .action(async (opts: { json?: boolean }) => {
    const report = await doctor(config());
    process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
    // The NSFW model's WASM threads would keep the process alive: exit with the verdict.
    process.exit(report.problems.length > 0 ? 1 : 0);
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`mediad: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
