// `npm run build:ts`: compiles src/, test/ and bench/ into dist/ with tsc, then bundles the server
// command (scripts/bundle-server.mjs). Skipped when dist/ was built from exactly these inputs and
// every file tsc emitted is still there: the same clone builds three times otherwise (npm ci's
// `prepare`, then `pretest` and `pretest:pg`), 45 s each on 2 cores. The inputs are hashed by
// content (about 500 files, a few MB: ~50 ms), not by time, so a checkout, a stash or an edit back
// to the same text is seen as what it is; the emitted files are checked because another step may
// remove some (`build:web` empties dist/web, where tsc puts the web modules the unit tests import).
// `--force` builds whatever the stamp says.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = path.join(ROOT, 'dist', '.build-ts-inputs');
const TREES = ['src', 'test', 'bench'];
const FILES = [
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'scripts/bundle-server.mjs',
  'scripts/build-ts.mjs',
];
// What tsc and the bundle never read; bench results change with every benchmark run.
const IGNORED = new Set(['bench/results']);

function* walk(dir) {
  for (const entry of fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const rel = `${dir}/${entry.name}`;
    if (IGNORED.has(rel)) continue;
    if (entry.isDirectory()) yield* walk(rel);
    else if (entry.isFile()) yield rel;
  }
}

function inputsHash() {
  const hash = crypto.createHash('sha256');
  for (const rel of [...TREES.flatMap((t) => [...walk(t)]), ...FILES]) {
    hash.update(`${rel}\0`);
    hash.update(fs.readFileSync(path.join(ROOT, rel)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The stamp of the last build: its inputs' hash and the files tsc emitted. */
function readStamp() {
  try {
    return JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    return null;
  }
}

const want = inputsHash();
const stamp = readStamp();
const fresh =
  stamp?.inputs === want &&
  fs.existsSync(path.join(ROOT, 'dist/src/cli.js')) &&
  stamp.emitted.every((file) => fs.existsSync(path.join(ROOT, file)));
if (fresh && !process.argv.includes('--force')) {
  console.log('build:ts: dist/ is up to date with src/, test/ and bench/ (npm run build:ts -- --force builds anyway)');
  process.exit(0);
}

fs.rmSync(STAMP, { force: true });
// Tests of deleted sources must not linger in dist/test and run.
fs.rmSync(path.join(ROOT, 'dist/test'), { recursive: true, force: true });
let emitted;
try {
  const out = execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--listEmittedFiles'],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 },
  );
  emitted = out
    .split('\n')
    .filter((l) => l.startsWith('TSFILE: '))
    .map((l) => path.relative(ROOT, l.slice('TSFILE: '.length).trim()));
} catch (err) {
  // tsc prints its diagnostics on stdout, among the files it emitted anyway.
  const lines = String(err.stdout ?? '').split('\n');
  process.stdout.write(lines.filter((l) => !l.startsWith('TSFILE: ')).join('\n'));
  process.exit(typeof err.status === 'number' ? err.status : 1);
}
execFileSync(process.execPath, [path.join(ROOT, 'scripts/bundle-server.mjs')], { cwd: ROOT, stdio: 'inherit' });
fs.chmodSync(path.join(ROOT, 'dist/src/cli.js'), 0o755);
fs.writeFileSync(STAMP, JSON.stringify({ inputs: want, emitted }));
