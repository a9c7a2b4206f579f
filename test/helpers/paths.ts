import path from 'node:path';

// Where the tests are run from. `npm test` runs them built (dist/test, compiled by its pretest
// with the rest of the tree: no TypeScript is compiled in each test process or in each mediad
// process a test starts); a file run by hand with `node --import tsx --test test/…` runs from
// source. Either way paths name the checkout, and the mediad command is the one built beside them.

/** Whether this file runs built, from dist/test. */
export const BUILT = path.basename(path.resolve(import.meta.dirname, '../..')) === 'dist';

/** The checkout's root. */
export const ROOT = path.resolve(import.meta.dirname, BUILT ? '../../..' : '../..');

/** node's arguments that run the mediad command (then its own: `[...MEDIAD, 'serve']`). */
export const MEDIAD: readonly string[] = BUILT
  ? ['--enable-source-maps', path.join(ROOT, 'dist/src/cli.js')]
  : ['--import', 'tsx', path.join(ROOT, 'src/cli.ts')];
