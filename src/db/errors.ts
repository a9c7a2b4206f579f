/** The driver's error code of a database error (SQLite's name, PostgreSQL's SQLSTATE), or ''. */
export function errorCode(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : '';
}

/** True for a unique-constraint violation on either dialect (SQLite or PostgreSQL 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** True for a foreign-key violation on either dialect (SQLite, or PostgreSQL 23503). */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}
