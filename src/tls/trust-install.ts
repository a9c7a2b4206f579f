import { copyFile, mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ProcessError, runProcess, runTool } from '../media/index.js';
import { shellQuote } from './trust-steps.js';

// `mediad tls trust`: installs the local certificate authority where this machine's browsers and
// tools look for it — Chrome/Chromium's NSS database, each Firefox profile, the Debian system
// store (as root), the macOS login keychain, the Windows user store — and says, for each, what it
// did or what it could not do and how to do it by hand. It changes nothing else.

export type TrustStatus = 'done' | 'skipped' | 'failed';

export interface TrustOutcome {
  target: string;
  status: TrustStatus;
  detail: string;
}

export interface TrustContext {
  caFile: string;
  home: string;
  platform: NodeJS.Platform;
  isRoot: boolean;
  /** The certificate's nickname in NSS databases (one per CA: a new CA is a new entry). */
  nickname: string;
  /** False: leave the system store alone (--no-system). */
  system: boolean;
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

/** Runs a command; its failure as one readable line. */
async function attempt(cmd: string, args: string[]): Promise<string | null> {
  try {
    await runProcess(cmd, args, { timeoutMs: 60_000 });
    return null;
  } catch (err) {
    if (err instanceof ProcessError) return err.stderrTail.trim().split('\n').at(-1) || err.message;
    return String(err);
  }
}

async function nssAdd(ctx: TrustContext, db: string, target: string): Promise<TrustOutcome> {
  // A database certutil has never opened is made first, without a password (as browsers make it).
  if (!(await exists(path.join(db, 'cert9.db')))) {
    await mkdir(db, { recursive: true, mode: 0o700 });
    const made = await attempt('certutil', ['-d', `sql:${db}`, '-N', '--empty-password']);
    if (made) return { target, status: 'failed', detail: `could not create ${db}: ${made}` };
  }
  const failed = await attempt('certutil', [
    '-d',
    `sql:${db}`,
    '-A',
    '-t',
    'C,,',
    '-n',
    ctx.nickname,
    '-i',
    ctx.caFile,
  ]);
  return failed
    ? { target, status: 'failed', detail: `certutil refused (${failed})` }
    : { target, status: 'done', detail: `added to ${db}; restart the browser` };
}

/** Firefox keeps a certificate database per profile (also under snap). */
async function firefoxProfiles(home: string): Promise<string[]> {
  const roots = [path.join(home, '.mozilla/firefox'), path.join(home, 'snap/firefox/common/.mozilla/firefox')];
  const found: string[] = [];
  for (const root of roots) {
    const entries = await readdir(root).catch(() => [] as string[]);
    for (const e of entries) if (await exists(path.join(root, e, 'cert9.db'))) found.push(path.join(root, e));
  }
  return found;
}

async function linux(ctx: TrustContext): Promise<TrustOutcome[]> {
  const out: TrustOutcome[] = [];
  const ca = shellQuote(ctx.caFile);
  const certutil = (await runTool('certutil', ['-H'])).found;
  if (!certutil) {
    out.push({
      target: 'Chrome, Chromium, Edge (NSS)',
      status: 'failed',
      detail:
        'certutil is not installed: install libnss3-tools (apt-get install -y libnss3-tools) and run `mediad tls trust` again',
    });
  } else {
    out.push(await nssAdd(ctx, path.join(ctx.home, '.pki/nssdb'), 'Chrome, Chromium, Edge (NSS)'));
    const profiles = await firefoxProfiles(ctx.home);
    if (profiles.length === 0)
      out.push({
        target: 'Firefox',
        status: 'skipped',
        detail: 'no Firefox profile here (start Firefox once, then run this again, or import the CA in its settings)',
      });
    for (const p of profiles) out.push(await nssAdd(ctx, p, `Firefox (${path.basename(p)})`));
  }
  const store = '/usr/local/share/ca-certificates';
  const hasUpdate = (await runTool('update-ca-certificates', ['--help'])).found;
  if (!ctx.system) out.push({ target: 'system store', status: 'skipped', detail: 'left alone (--no-system)' });
  else if (!(await exists(store)) || !hasUpdate)
    out.push({ target: 'system store', status: 'skipped', detail: 'no Debian/Ubuntu CA store here' });
  else if (!ctx.isRoot)
    out.push({
      target: 'system store (curl, wget, most tools)',
      status: 'skipped',
      detail: `needs root: sudo cp ${ca} ${store}/mediad-local-ca.crt && sudo update-ca-certificates`,
    });
  else {
    await copyFile(ctx.caFile, path.join(store, 'mediad-local-ca.crt'));
    const failed = await attempt('update-ca-certificates', []);
    out.push(
      failed
        ? { target: 'system store', status: 'failed', detail: `update-ca-certificates: ${failed}` }
        : { target: 'system store (curl, wget, most tools)', status: 'done', detail: `${store}/mediad-local-ca.crt` },
    );
  }
  return out;
}

async function macos(ctx: TrustContext): Promise<TrustOutcome[]> {
  const keychain = path.join(ctx.home, 'Library/Keychains/login.keychain-db');
  const failed = await attempt('security', ['add-trusted-cert', '-r', 'trustRoot', '-k', keychain, ctx.caFile]);
  return [
    failed
      ? {
          target: 'macOS keychain (Safari, Chrome)',
          status: 'failed',
          detail: `${failed}; by hand: sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ${shellQuote(ctx.caFile)}`,
        }
      : { target: 'macOS keychain (Safari, Chrome)', status: 'done', detail: `trusted in ${keychain}` },
    {
      target: 'Firefox',
      status: 'skipped',
      detail: 'import it in Settings › Privacy & Security › Certificates, or set security.enterprise_roots.enabled',
    },
  ];
}

async function windows(ctx: TrustContext): Promise<TrustOutcome[]> {
  const failed = await attempt('certutil', ['-user', '-addstore', 'Root', ctx.caFile]);
  return [
    failed
      ? {
          target: 'Windows store (Edge, Chrome)',
          status: 'failed',
          detail: `${failed}; by hand, as administrator: certutil -addstore -f ROOT ${ctx.caFile}`,
        }
      : { target: 'Windows store (Edge, Chrome)', status: 'done', detail: 'added to the current user’s Root store' },
  ];
}

export async function installCa(ctx: TrustContext): Promise<TrustOutcome[]> {
  if (ctx.platform === 'linux') return linux(ctx);
  if (ctx.platform === 'darwin') return macos(ctx);
  if (ctx.platform === 'win32') return windows(ctx);
  return [{ target: ctx.platform, status: 'skipped', detail: 'no store known here: see the README’s steps' }];
}

export function formatTrust(ctx: TrustContext, outcomes: TrustOutcome[]): string {
  const mark: Record<TrustStatus, string> = { done: 'done   ', skipped: 'not done', failed: 'FAILED ' };
  const lines = [`Trusting ${ctx.caFile}`, ''];
  for (const o of outcomes) lines.push(`  ${mark[o.status]}  ${o.target}: ${o.detail}`);
  const ca = shellQuote(ctx.caFile);
  lines.push(
    '',
    'Clients that keep their own list:',
    `  Node.js: NODE_EXTRA_CA_CERTS=${ca}    curl: curl --cacert ${ca}`,
    'Other machines: download it from http://<this host>:<port>/ca.crt and check its SHA-256 (the server logs it).',
    '',
  );
  return lines.join('\n');
}
