import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BUILT, ROOT } from '../helpers/paths.js';

// The command's #! line (src/cli.ts) is the one place that sets glibc's malloc thresholds and V8's
// flags for every role (npm start, the Dockerfile and the systemd units run the file directly).
// Fixing glibc's mmap threshold also fixes its trim threshold at 128 KiB: then a SQLite
// connection's page cache, dropped whenever another connection commits, was given back to the
// system and faulted in again page by page (a task's claim 1.0 ms instead of 0.3 ms,
// docs/benchmarks.md). The line must keep the two together.

/** The variables the line's `env -S` sets before node, by name. */
function shebangEnv(file: string): Map<string, string> {
  const first = readFileSync(file, 'utf8').split('\n', 1)[0] ?? '';
  const m = /^#!\/usr\/bin\/env -S (.*)$/.exec(first);
  assert.ok(m, `${file}: the #! line runs env -S (one argument would hold every word): ${first}`);
  const words = m[1]!.split(/\s+/);
  const node = words.indexOf('node');
  assert.ok(node > 0, `${file}: the #! line starts node after its variables: ${first}`);
  return new Map(words.slice(0, node).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
}

const SQLITE_PAGE_CACHE = 2_048_000; // SQLite's default cache_size (-2000 KiB), which mediad keeps

describe('the command’s #! line', () => {
  const files = [path.join(ROOT, 'src/cli.ts'), ...(BUILT ? [path.join(ROOT, 'dist/src/cli.js')] : [])];
  for (const file of files) {
    it(`${path.relative(ROOT, file)}: a fixed mmap threshold comes with a trim threshold above a SQLite page cache`, () => {
      const env = shebangEnv(file);
      assert.ok(env.has('MALLOC_MMAP_THRESHOLD_'), 'the upload buffers are mapped on their own (bench:tus)');
      const trim = Number(env.get('MALLOC_TRIM_THRESHOLD_'));
      assert.ok(Number.isInteger(trim), 'MALLOC_TRIM_THRESHOLD_ is set, in bytes');
      assert.ok(trim > SQLITE_PAGE_CACHE, `${trim} bytes keep a dropped page cache in the heap`);
    });
  }
});
