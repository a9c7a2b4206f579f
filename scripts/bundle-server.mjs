// The last step of `npm run build:ts`: the mediad command (dist/src/cli.js, what `npm start`, the
// Dockerfile and the systemd units run) is replaced by an esbuild bundle of src/ and most of its
// packages, beside it in dist/src/: one file plus chunks for what is loaded on demand (S3, Redis).
// Node's ES module loader pays per module (resolve, read, parse, link): the command loaded
// ~2,000 modules (typebox alone 679, kysely 262, src/ 313), which was half of the start's CPU
// (bench/startup.ts, docs/benchmarks.md). Everything else in dist/src (what the tests import)
// stays tsc's one file per module.
//
// Kept external (loaded from node_modules as before): native addons, packages that read files
// relative to their own code (Scalar's script, nsfwjs's models, tfjs's WASM), packages loaded
// only on first use anyway, and pino (its transports start worker threads by file name).
// The SQLite reader and request-log writer threads are entries of their own, written beside the
// command: src/db/threads.ts starts `./<name>.js` relative to its own module, which in the
// bundle is a file of this same directory.
import { build } from 'esbuild';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const OUT = 'dist/src';
const EXTERNAL = [
  'better-sqlite3',
  'sharp',
  '@scalar/*',
  '@tensorflow/*',
  'nsfwjs',
  'nsfwjs/*',
  '@tus/utils',
  '@tus/file-store',
  '@tus/s3-store',
  '@aws-sdk/*',
  'pg',
  'ioredis',
  'openid-client',
  'pino',
  '@fastify/swagger',
];

// @tus/server is bundled (into the chunk loaded by the first tus request) so that its import of
// srvx's Node adapter can be left out: see bundle-shims/srvx-node.mjs.
const withoutSrvxNodeAdapter = {
  name: 'without-srvx-node-adapter',
  setup(b) {
    b.onResolve({ filter: /^srvx\/node$/ }, () => ({
      path: path.resolve('scripts/bundle-shims/srvx-node.mjs'),
    }));
  },
};

// Chunks of an earlier build have other hashes: remove them so they do not pile up.
for (const name of readdirSync(OUT)) if (/^chunk-.*\.js(\.map)?$/.test(name)) rmSync(path.join(OUT, name));

const result = await build({
  metafile: true,
  entryPoints: {
    cli: 'src/cli.ts',
    'reader-thread': 'src/db/reader-thread.ts',
    'log-writer-thread': 'src/db/log-writer-thread.ts',
  },
  outdir: OUT,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  plugins: [withoutSrvxNodeAdapter],
  sourcemap: true,
  logLevel: 'warning',
  // CommonJS packages bundled into an ES module still call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as mediadRequire } from 'node:module'; const require = mediadRequire(import.meta.url);",
  },
});

// V8 keeps each module's source text for as long as its functions live: as Latin-1 (one byte a
// character) if every character fits, otherwise the whole text as UTF-16. esbuild escapes
// non-ASCII characters in strings but leaves them in comments and regular expressions, and seven
// of them (…, ’, →) made cli.js's 3.4 million characters cost 6.8 MB of heap instead of 3.4.
// Escaping them as \uXXXX means the same in comments, strings, templates and regular
// expressions; only the columns after them on their own line move in the source map.
for (const file of Object.keys(result.metafile.outputs)) {
  if (!file.endsWith('.js')) continue;
  const text = readFileSync(file, 'utf8');
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(text)) continue;
  // eslint-disable-next-line no-control-regex
  const ascii = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  writeFileSync(file, ascii);
}
