// The API suite runs twice in CI: on the embedded default (SQLite) in `npm test`, then on PostgreSQL
// (`npm run test:pg` with MEDIAD_TEST_DATABASE_URL). A file whose servers run on SQLite whatever the
// pass (they start `mediad serve` on a data directory of their own) or whose subject does not touch
// the database would run the very same thing twice: it runs in the SQLite pass only.

/** The reason to skip a file in the PostgreSQL pass (`why` says why it is the same there), or false. */
export function sqlitePassOnly(why: string): string | false {
  return process.env.MEDIAD_TEST_DATABASE_URL ? `${why}: run in the SQLite pass` : false;
}
