#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=2097152 node --max-semi-space-size=32
// The young generation is doubled (semi-spaces of 32 MB, V8's default is 16): under load the
// objects of requests still in flight survive a collection that comes too soon and are copied
// twice and promoted, and on GET /files at 64 connections the extra collections doubled the
// p99 (bench/api-files.ts). npm start, the Dockerfile and the systemd units run this file
// directly, so this line is the one place the flag is set (npm run build makes it executable).
// MALLOC_MMAP_THRESHOLD_ (glibc; env sets it before node starts, at no cost): blocks of 128 KiB
// and more are mapped on their own and unmapped when freed. By default glibc raises that
// threshold to the largest block freed so far, so an upload's 1 MiB buffers went to its main
// heap, where they stayed resident after they were freed: 20 MB less RSS during and after a
// large upload (bench:tus, docs/benchmarks.md "Resumable uploads"), server CPU per GB unchanged.
// MALLOC_TRIM_THRESHOLD_: setting the mmap threshold also stops glibc from raising its trim
// threshold, which then stays at 128 KiB: the heap's top went back to the system whenever that much
// was free, and came back page fault by page fault. A SQLite connection drops its page cache
// (2,048,000 bytes) whenever another connection commits (the request log's writer, 4 times a
// second), so every refill faulted: a task's claim took 1.0 ms of the main thread, 0.3 ms with a
// threshold above that cache. 2 MiB, not more: each thread's arena keeps up to that much, and the
// upload's peak RSS grew by 3–6 MB with it (9 MB at 8 MiB; docs/benchmarks.md "The heap given back").
import { Command } from 'commander';
import { migrate, openDatabase, type Db } from './db/connect.js';
import { systemClock } from './deps.js';
import { randomBytes } from 'node:crypto';
import type { Role } from './db/schema.js';
import type { Deps } from './deps.js';
import { AppError } from './errors.js';
import { createKey, listKeys, revokeKey } from './services/people/keys.js';
import { createUserInOrg, disableUser, listUsers, resetPassword } from './services/people/users.js';
import { API_VERSIONS, DEFAULT_VERSION, isApiVersion, LATEST_VERSION, type ApiVersion } from './versions.js';
import { startServer, startWorker } from './server.js';
import { createRuntime } from './runtime.js';
import { reconcileBlobs } from './services/media/blob-reconcile.js';
import { doctor, formatDoctor } from './doctor.js';
import { caFileForClients } from './tls/ca-file.js';
import { configOrExit, explained } from './commands/common.js';
import { registerClientCommands } from './commands/client.js';
// Resumable uploads (issue 25).
import { openUploadStore, sweepUploads } from './services/media/uploads.js';
import { MEDIAD_VERSION, PACKAGE } from './package-info.js';

// The mediad command. Every subcommand reads the same environment (docs/configuration.md);
// docs/cli.md describes each. Client commands (upload, tls trust) live in commands/.

const config = configOrExit;

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
  .showHelpAfterError('(run "mediad --help" for the list of commands)')
  .version(
    `mediad ${MEDIAD_VERSION} (Node ${process.version}; mediad supports Node ${PACKAGE.nodeRange})`,
    '-v, --version',
    'print the version of mediad and of Node',
  );

program
  .command('serve')
  .description(
    'Start the HTTPS API and file delivery (what `npm start` runs). Configured by MEDIAD_* environment variables.',
  )
  .action(async () => {
    const settings = config();
    const server = await explained(settings, () => startServer(settings));
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
    const settings = config();
    const worker = await explained(settings, () => startWorker(settings));
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
    const applied = await explained(config(), () => withDb((db) => migrate(db), false));
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  });

const keys = program.command('keys').description('Create, list and revoke API keys.');

keys
  .command('create')
  .description('Create an API key for a project (the org and project are created when missing). The key is shown once.')
  .requiredOption('--org <name>', 'organisation name')
  .requiredOption('--project <name>', 'project name')
  .option('--name <label>', 'a label to recognise the key by')
  .option(
    '--api-version <version>',
    `the API version of a project it creates: ${API_VERSIONS.join(', ')} or latest (default ${DEFAULT_VERSION}, the envelope generation)`,
  )
  .option('--json', 'print one JSON line {"key","org_id","project_id"}')
  .option('--export', 'print only `export MEDIAD_API_KEY=… MEDIAD_PROJECT=…`, for eval "$(…)"')
  .action(
    async (opts: {
      org: string;
      project: string;
      name?: string;
      apiVersion?: string;
      json?: boolean;
      export?: boolean;
    }) => {
      let apiVersion: ApiVersion | undefined;
      if (opts.apiVersion !== undefined) {
        apiVersion =
          opts.apiVersion === 'latest' ? LATEST_VERSION : isApiVersion(opts.apiVersion) ? opts.apiVersion : undefined;
        if (!apiVersion) {
          process.stderr.write(
            `mediad: --api-version must be one of ${API_VERSIONS.join(', ')} or latest, got "${opts.apiVersion}"\n`,
          );
          process.exit(2);
        }
      }
      const created = await withDb((db) =>
        createKey({ db, clock: systemClock }, opts.org, opts.project, opts.name, { apiVersion }),
      );
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify({ key: created.key, org_id: created.org_id, project_id: created.project_id, key_id: created.key_id })}\n`,
        );
        return;
      }
      if (opts.export) {
        process.stdout.write(`export MEDIAD_API_KEY=${created.key} MEDIAD_PROJECT=${created.project_id}\n`);
        return;
      }
      const base = config().publicUrl;
      const ca = caFileForClients(config());
      process.stdout.write(
        [
          `API key for ${opts.org}/${opts.project} (${created.project_id}):`,
          '',
          `  ${created.key}`,
          '',
          'It is shown only now; mediad stores only its hash. Set it (and the project) in your shell:',
          '',
          `  export MEDIAD_API_KEY=${created.key} MEDIAD_PROJECT=${created.project_id}`,
          '',
          'and call the API with it:',
          '',
          `  curl${ca ? ` --cacert ${ca}` : ''} -H "Authorization: Bearer $MEDIAD_API_KEY" ${base}/files`,
          '',
          `Revoke it with: mediad keys revoke ${created.key_id}`,
          '',
        ].join('\n'),
      );
    },
  );

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

const users = program
  .command('users')
  .description('People who sign in to the web application (the first one is usually made with the setup link).');

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
const isRole = (r: string): r is Role => (ROLES as readonly string[]).includes(r);

/** A password from stdin (--password-stdin), else a generated one that is printed once. */
async function passwordInput(fromStdin: boolean | undefined): Promise<string | undefined> {
  if (!fromStdin) return undefined;
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text.replace(/\r?\n$/, '');
}

/** Runs a users service; its AppError (a taken email, a short password) is a message, not a stack. */
async function usersCommand<T>(fn: (deps: Pick<Deps, 'db' | 'clock' | 'config'>) => Promise<T>): Promise<T> {
  try {
    return await withDb((db) => fn({ db, clock: systemClock, config: config() }));
  } catch (err) {
    if (err instanceof AppError) {
      process.stderr.write(`mediad: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

users
  .command('create')
  .description('Create a user with a role in an organisation (made with a "default" project when missing).')
  .requiredOption('--email <email>', 'their email, to sign in with')
  .requiredOption('--name <name>', 'their name')
  .requiredOption('--org <name>', 'the organisation')
  .option('--role <role>', `their role: ${ROLES.join(', ')}`, 'member')
  .option('--admin', 'an instance administrator')
  .option('--password-stdin', 'read the password from stdin (else one is generated and printed once)')
  .action(
    async (opts: {
      email: string;
      name: string;
      org: string;
      role: string;
      admin?: boolean;
      passwordStdin?: boolean;
    }) => {
      if (!isRole(opts.role)) {
        process.stderr.write(`mediad: --role must be one of ${ROLES.join(', ')}, got "${opts.role}"\n`);
        process.exit(2);
      }
      const role = opts.role;
      const given = await passwordInput(opts.passwordStdin);
      const password = given ?? randomBytes(12).toString('base64url');
      const user = await usersCommand((deps) =>
        createUserInOrg(deps, {
          email: opts.email,
          name: opts.name,
          password,
          isAdmin: opts.admin,
          org: opts.org,
          role,
        }),
      );
      process.stdout.write(
        [
          `created ${user.id} ${user.email} (${role} of ${opts.org})`,
          ...(given
            ? []
            : [
                '',
                `  password: ${password}`,
                '',
                'It is shown only now; they can change it under Account once signed in.',
              ]),
          `Sign in at ${config().publicUrl}/app/`,
          '',
        ].join('\n'),
      );
    },
  );

users
  .command('list')
  .description('List users with their organisations and roles.')
  .option('--json', 'print JSON')
  .action(async (opts: { json?: boolean }) => {
    const rows = await usersCommand((deps) => listUsers(deps));
    if (opts.json) return void process.stdout.write(`${JSON.stringify(rows)}\n`);
    if (rows.length === 0)
      return void process.stdout.write(
        'no users yet: open the setup link `mediad serve` prints, or run `mediad users create`\n',
      );
    for (const u of rows) {
      process.stdout.write(
        `${u.id}  ${u.email}  "${u.name}"  ${u.orgs.join(' ') || '(no organisation)'}${u.is_admin ? '  ADMIN' : ''}${u.status === 'disabled' ? '  DISABLED' : ''}\n`,
      );
    }
  });

users
  .command('reset-password')
  .description(
    "Set a user's password (generated unless --password-stdin) and end their sessions; re-enables a disabled user.",
  )
  .argument('<email>', 'the user')
  .option('--password-stdin', 'read the new password from stdin')
  .action(async (email: string, opts: { passwordStdin?: boolean }) => {
    const given = await passwordInput(opts.passwordStdin);
    const password = await usersCommand((deps) => resetPassword(deps, email, given));
    process.stdout.write(
      given
        ? `password of ${email} changed; their sessions ended\n`
        : `new password of ${email} (shown only now):\n\n  ${password}\n\n`,
    );
  });

users
  .command('disable')
  .description('Stop a user from signing in and end their sessions (reset-password enables them again).')
  .argument('<email>', 'the user')
  .action(async (email: string) => {
    await usersCommand((deps) => disableUser(deps, email));
    process.stdout.write(`disabled ${email}; their sessions ended\n`);
  });

program
  .command('blobs')
  .description('Storage upkeep.')
  .command('sweep')
  .description(
    'Delete stored blobs that no file references (left by crashes before the blob journal existed), and resumable uploads left unfinished past MEDIAD_UPLOAD_EXPIRY_HOURS. A blob a file references is never deleted.',
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
      // Resumable uploads (issue 25): unfinished uploads past MEDIAD_UPLOAD_EXPIRY_HOURS.
      const uploads = await sweepUploads(runtime.deps, await openUploadStore(runtime.deps), {
        dryRun: opts.dryRun === true,
      });
      for (const id of [...uploads.expired, ...uploads.orphans])
        process.stdout.write(`${opts.dryRun ? 'would delete' : 'deleted'} upload ${id}\n`);
      process.stdout.write(
        `uploads: ${uploads.expired.length} expired and ${uploads.orphans.length} without a record ${opts.dryRun ? 'to delete (dry run: nothing deleted)' : 'deleted'}\n`,
      );
    } finally {
      await runtime.close();
    }
  });

program
  .command('doctor')
  .description(
    'Check the install (Node, the data dir and its free space, the database and its migrations, the TLS files and their expiry, the port, FFmpeg’s encoders) and the intelligence engines (local ones, the configured AI provider, the engine each kind uses). Exits 1 when something is broken.',
  )
  .option('--json', 'print the report as JSON')
  .action(async (opts: { json?: boolean }) => {
    const report = await doctor(config(), { install: true });
    process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
    // The NSFW model's WASM threads would keep the process alive: exit with the verdict.
    process.exit(report.problems.length > 0 ? 1 : 0);
  });

registerClientCommands(program, config);

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`mediad: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
