// npm run build:web: vite build of web/ into dist/web, then a .br and a .gz beside every
// compressible file, so the server can send the pre-compressed bytes (src/api/web-app.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, 'dist/web');
const vite = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
  {
    cwd: path.join(root, 'web'),
    stdio: 'inherit',
  },
);
if (vite.status !== 0) process.exit(vite.status ?? 1);

const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map|vtt)$/;
let files = 0;
for (const entry of fs.readdirSync(out, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !COMPRESSIBLE.test(entry.name)) continue;
  const file = path.join(entry.parentPath, entry.name);
  const bytes = fs.readFileSync(file);
  fs.writeFileSync(`${file}.gz`, zlib.gzipSync(bytes, { level: 9 }));
  fs.writeFileSync(
    `${file}.br`,
    zlib.brotliCompressSync(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  );
  files++;
}
console.log(`dist/web: built, ${files} files pre-compressed (.br, .gz)`);
