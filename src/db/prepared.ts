import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pgModule from 'pg';
import { errorCode } from './errors.js';

// Named statements on PostgreSQL for the queries compiled once (db/compiled.ts). Kysely sends
// every query unnamed, so PostgreSQL parses and plans it again on every call: the task claim's
// plan alone cost the database 0.72 ms a call, its parse 0.28 ms, against 0.5 ms to run it
// (bench:tasks, PostgreSQL small tasks, log_min_duration_statement). A statement named on a
// connection is parsed there once, and after PostgreSQL's first five custom plans it runs a
// cached generic plan. Only SQL made once per process is named, and a bounded number of the
// transactions' last writes whose text repeats (nameIfRepeated): so the names stay few (a
// statement whose text varies with its values would name a new one each time).

const names = new Map<string, string>();
let made = 0;

/**
 * Statements run on a connection of their own whose plans are generic (made once, without the
 * values). PostgreSQL chooses for each execution between a plan made for its values and the
 * generic plan by their estimated costs; for the task claim it never chose the generic one
 * (pg_prepared_statements: 200 custom plans of 200), so it planned every claim: 1.12 ms a claim,
 * 0.65 ms with the generic plan. The setting is a session's, and on the pool's connections it
 * would also plan every ad-hoc query without its values: hence a connection apart, used outside
 * transactions only.
 */
const generic = new Set<string>();
export const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';

/**
 * Every connection of mediad's runs without JIT compilation. PostgreSQL compiles a statement when
 * its plan's estimated cost passes jit_above_cost, and a generic plan made without statistics (a
 * new database, or autovacuum off) can estimate the task claim at a million: with JIT on, every
 * claim then spent 640 ms compiling itself (inlining 61, optimisation 361, emission 217 ms: EXPLAIN
 * ANALYZE on a database with autovacuum off) to run for under a millisecond, and small tasks ran
 * at 2.7 a second instead of 250. mediad's statements are short, and none gains from compilation.
 * The claim's connection says so in its startup options, the pool's connections with NO_JIT_SET.
 */
export const NO_JIT = '-c jit=off';
export const NO_JIT_SET = 'set jit = off';

/**
 * Names `sql` for PostgreSQL's extended protocol: each connection prepares it at its first use.
 * `genericPlan`: run outside a transaction, it goes to the connection with generic plans.
 */
export function nameStatement(sql: string, { genericPlan = false }: { genericPlan?: boolean } = {}): void {
  if (!names.has(sql)) names.set(sql, `mediad_${made++}`);
  if (genericPlan) generic.add(sql);
}

/**
 * A transaction's last writes (db/transact.ts) are put together anew each time, but their text
 * repeats: it changes only with which held-back writes the transaction made and how many rows each
 * gathered, so a kind's task completion is the same text every time. Unnamed, PostgreSQL parsed and
 * planned it on every call: 0.22 ms of planning a task (pg_stat_statements.track_planning,
 * bench/pg-trace.ts), its parse besides. A text seen a second time is named like the statements
 * compiled once. Each name is a prepared statement on every connection that runs it, so at most
 * REPEATED_NAMES texts a process are named; the rest go unnamed, as before.
 *
 * Named, PostgreSQL still planned it at every bind: for the small tasks' completion it kept
 * choosing a plan made for the values (0.49 ms a bind against 0.05 for the claim's generic plan,
 * log_min_duration_statement in bench/pg-trace.ts). Its writes are by key (ids, the counters'
 * keys, a project's automations), where the values do not change the plan, so where it is sent
 * alone (outside a transaction) it runs on the connection with generic plans.
 */
export const REPEATED_NAMES = 32;
/** Last-writes texts seen once and not named yet (forgotten all at once past SEEN_ONCE_MAX). */
const seenOnce = new Set<string>();
const SEEN_ONCE_MAX = 64;
let repeatedNamed = 0;

function nameIfRepeated(text: string): void {
  if (names.has(text) || repeatedNamed >= REPEATED_NAMES) return;
  if (!seenOnce.delete(text)) {
    if (seenOnce.size >= SEEN_ONCE_MAX) seenOnce.clear();
    seenOnce.add(text);
    return;
  }
  nameStatement(text, { genericPlan: true });
  repeatedNamed++;
}

/**
 * PostgreSQL refuses a statement prepared before its table changed shape when its rows would change
 * with it (`select *` after a newer mediad's migration added a column, in a rolling upgrade):
 * "cached plan must not change result type", before running it. The statement gets a new name,
 * prepared afresh at its next use on every connection.
 */
const STALE_PLAN = '0A000';
function renameStale(sql: string, err: unknown): boolean {
  if (errorCode(err) !== STALE_PLAN || !names.has(sql)) return false;
  names.set(sql, `mediad_${made++}`);
  return true;
}

const COMMANDS: readonly PostgresQueryResult<unknown>['command'][] = ['UPDATE', 'DELETE', 'INSERT', 'SELECT', 'MERGE'];
/** Kysely reads the command only to count affected rows (INSERT, UPDATE, DELETE, MERGE); BEGIN and the like count none. */
const commandOf = (c: string) => COMMANDS.find((k) => k === c) ?? 'SELECT';

/**
 * Why the connection with generic plans failed a statement, if it did: 'refused' when its start
 * was refused (a pooler such as PgBouncer refuses the `options` startup parameter unless told to
 * ignore it: SQLSTATE 08P01), which will not change; 'unreachable' when it could not be made (the
 * server restarting, the network), which may pass; 'lost' when it broke, where the statement may
 * have run. Its statements then go to the pool's connections, planned as before: from then on,
 * or this once.
 */
function connectionFailure(err: unknown): 'refused' | 'unreachable' | 'lost' | null {
  const code = errorCode(err);
  if (code === '08P01') return 'refused';
  if (/^(08001|08004|28|57P03|ECONNREFUSED$|ENOTFOUND$|EAI_AGAIN$|EHOSTUNREACH$|ENETUNREACH$)/.test(code))
    return 'unreachable';
  return /^(08|57P0|E[A-Z]+$)/.test(code) ? 'lost' : null;
}

interface GenericPlans {
  pool: pgModule.Pool;
  usable: boolean;
}

/**
 * Marks the statement of a transaction's last writes (db/transact.ts): where it is the
 * transaction's only statement, the connection sends it alone, without BEGIN and COMMIT.
 */
export const LAST_WRITES = '/* mediad: last writes */ ';

const NOTHING_SENT: PostgresQueryResult<Record<string, unknown>> = { command: 'SELECT', rowCount: 0, rows: [] };

function preparing(client: pgModule.PoolClient, generics: GenericPlans | null): PostgresPoolClient {
  // Kysely's begin, commit and rollback pass through here: a refused statement is sent again only
  // outside a transaction (inside one, PostgreSQL has aborted it: the caller's retry runs it anew).
  let inTransaction = false;
  // A transaction's BEGIN waits for its first statement. When that is its last writes (LAST_WRITES,
  // db/transact.ts: all a task's completion writes, say), the statement goes alone, atomic without
  // BEGIN and COMMIT: two of its three round trips fewer. `alone`: sent so; COMMIT or ROLLBACK has
  // nothing left to end (a statement that failed was rolled back by PostgreSQL with all its writes).
  let beginHeld = false;
  let alone = false;
  const send = (text: string, values: unknown[]) => {
    if (text.startsWith(LAST_WRITES)) nameIfRepeated(text);
    const name = names.get(text);
    const q = name ? { name, text, values } : { text, values };
    if (!generics?.usable || inTransaction || !generic.has(text)) return client.query<Record<string, unknown>>(q);
    return generics.pool.query<Record<string, unknown>>(q).catch((err: unknown) => {
      const failure = connectionFailure(err);
      if (!failure) throw err;
      if (failure === 'refused') generics.usable = false;
      // Writes lost with their connection may have committed: sent again they could count twice.
      if (failure === 'lost' && text.startsWith(LAST_WRITES)) throw err;
      return client.query<Record<string, unknown>>(q);
    });
  };
  const sendRenamingStale = (text: string, values: unknown[]) =>
    send(text, values).catch((err: unknown) => {
      if (renameStale(text, err) && !inTransaction) return send(text, values);
      throw err;
    });
  const run = async (text: string, values: unknown[]) => {
    const ending = text === 'commit' || text === 'rollback';
    if (text === 'begin') {
      beginHeld = true;
      return NOTHING_SENT;
    }
    if (beginHeld) {
      beginHeld = false;
      if (ending) return NOTHING_SENT;
      if (text.startsWith(LAST_WRITES)) {
        alone = true;
        return send(text, values);
      }
      inTransaction = true;
      await send('begin', []);
    } else if (alone) {
      if (!ending) throw new Error('a statement after a transaction’s last writes');
      alone = false;
      return NOTHING_SENT;
    }
    if (text.startsWith('start transaction')) inTransaction = true;
    else if (ending) inTransaction = false;
    return sendRenamingStale(text, values);
  };
  function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query(
    text: string | PostgresCursor<unknown>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<Record<string, unknown>>> | PostgresCursor<unknown> {
    if (typeof text !== 'string') throw new Error('mediad reads PostgreSQL results whole: no cursor is configured');
    return run(text, [...parameters]).then((r) => ({
      command: commandOf(r.command),
      rowCount: r.rowCount ?? 0,
      rows: r.rows,
    }));
  }
  return { query, release: () => client.release() };
}

/**
 * `pool` for Kysely, its clients sending the named statements by name, and those marked for
 * generic plans (outside transactions) through `genericPool`, a pool of connections made with
 * GENERIC_PLANS, when given.
 */
export function withNamedStatements(pool: pgModule.Pool, genericPool: pgModule.Pool | null = null): PostgresPool {
  // One wrapper per connection: Kysely keeps its own state per client object.
  const wrapped = new WeakMap<pgModule.PoolClient, PostgresPoolClient>();
  const generics = genericPool ? { pool: genericPool, usable: true } : null;
  return {
    async connect() {
      const client = await pool.connect();
      let c = wrapped.get(client);
      if (!c) wrapped.set(client, (c = preparing(client, generics)));
      return c;
    },
    end: async () => {
      await Promise.all([pool.end(), genericPool?.end()]);
    },
  };
}
