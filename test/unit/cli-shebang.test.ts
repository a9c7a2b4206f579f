import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BUILT, ROOT } from '../helpers/paths.js';
import { readShebang } from '../helpers/shebang.js';

// The command's #! line sets glibc's malloc thresholds for every role; src/cli.ts says why the
// trim threshold must come with the fixed mmap threshold (a SQLite page cache faulted in again
// after every drop otherwise).

const SQLITE_PAGE_CACHE = 2_048_000; // SQLite's default cache_size (-2000 KiB), which mediad keeps

describe('the command’s #! line', () => {
  const files = [path.join(ROOT, 'src/cli.ts'), ...(BUILT ? [path.join(ROOT, 'dist/src/cli.js')] : [])];
  for (const file of files) {
    it(`${path.relative(ROOT, file)}: a fixed mmap threshold comes with a trim threshold above a SQLite page cache`, () => {
      const { line, env, nodeFlags } = readShebang(file);
      assert.match(line, /^#!\/usr\/bin\/env -S /, 'env -S splits the line (one argument would hold every word)');
      assert.ok(nodeFlags.length > 0, 'node is started by the line, after its variables');
      assert.ok('MALLOC_MMAP_THRESHOLD_' in env, 'the upload buffers are mapped on their own (bench:tus)');
      const trim = Number(env.MALLOC_TRIM_THRESHOLD_);
      assert.ok(Number.isInteger(trim), 'MALLOC_TRIM_THRESHOLD_ is set, in bytes');
      assert.ok(trim > SQLITE_PAGE_CACHE, `${trim} bytes keep a dropped page cache in the heap`);
    });
  }
});
