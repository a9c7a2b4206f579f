import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pgModule from 'pg';

// Named statements on PostgreSQL for the queries compiled once (db/compiled.ts). Kysely sends
// every query unnamed, so PostgreSQL parses and plans it again on every call: the task claim's
// plan alone cost the database 0.72 ms a call, its parse 0.28 ms, against 0.5 ms to run it
// (bench:tasks, PostgreSQL small tasks, log_min_duration_statement). A statement named on a
// connection is parsed there once, and after PostgreSQL's first five custom plans it runs a
// cached generic plan. Only SQL made once per process is named: its text never changes, so the
// names stay few (a statement whose text varies with its values would name a new one each time).

const names = new Map<string, string>();

/** Names `sql` for PostgreSQL's extended protocol: each connection prepares it at its first use. */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `mediad_${names.size}`);
}

const COMMANDS: readonly PostgresQueryResult<unknown>['command'][] = ['UPDATE', 'DELETE', 'INSERT', 'SELECT', 'MERGE'];
/** Kysely reads the command only to count affected rows (INSERT, UPDATE, DELETE, MERGE); BEGIN and the like count none. */
const commandOf = (c: string) => COMMANDS.find((k) => k === c) ?? 'SELECT';

function preparing(client: pgModule.PoolClient): PostgresPoolClient {
  function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query(
    text: string | PostgresCursor<unknown>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<Record<string, unknown>>> | PostgresCursor<unknown> {
    if (typeof text !== 'string') throw new Error('mediad reads PostgreSQL results whole: no cursor is configured');
    const values = [...parameters];
    const name = names.get(text);
    return client
      .query<Record<string, unknown>>(name ? { name, text, values } : { text, values })
      .then((r) => ({ command: commandOf(r.command), rowCount: r.rowCount ?? 0, rows: r.rows }));
  }
  return { query, release: () => client.release() };
}

/** `pool` for Kysely, its clients sending the named statements by name. */
export function withNamedStatements(pool: pgModule.Pool): PostgresPool {
  // One wrapper per connection: Kysely keeps its own state per client object.
  const wrapped = new WeakMap<pgModule.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let c = wrapped.get(client);
      if (!c) wrapped.set(client, (c = preparing(client)));
      return c;
    },
    end: () => pool.end(),
  };
}
