import { SqliteQueryCompiler, ValueNode, type LimitNode } from 'kysely';

/**
 * SQLite's compiler with a LIMIT that is a number written into the statement. SQLite (3.53 in
 * better-sqlite3 12) lets a bound LIMIT steer its plan, so a statement whose LIMIT is a parameter
 * is prepared again at every run (the outbox's poll: 7.8–8.0 µs a run with `limit ?`, 3.3–3.4 µs
 * with `limit 1`; docs/benchmarks.md). A LIMIT that is an argument of a compiledTemplate is a
 * marker when compiled and stays a parameter. OFFSET does not steer the plan and stays a parameter:
 * written in, every page of a list would be a statement of its own.
 */
export class SqliteLiteralLimitCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    const limit = ValueNode.is(node.limit) ? node.limit.value : undefined;
    if (typeof limit === 'number' && Number.isSafeInteger(limit) && limit >= 0) this.append(`limit ${limit}`);
    else super.visitLimit(node);
  }
}
