import { sql, type Insertable } from 'kysely';
import type { Db } from '../connect.js';
import { keepNewest } from '../request-log-segments.js';
import type { RequestLogSegmentsTable } from '../schema.js';

// Writing the request log's segments and keeping each project within its retention. Run on the
// log writer's thread for a SQLite file (db/log-writer.ts), on the caller's connection otherwise.

/** Segments per INSERT statement (13 values each, under SQLite's limit on bound values). */
const INSERT_ROWS = 500;

export interface Retention {
  /** Requests kept per project at most. */
  maxRows: number;
  /** Requests created before this time (ISO) go. */
  before: string;
}

/** A flush: its segments, then the trims of the projects it made due. */
export interface SegmentWrite {
  segments: Insertable<RequestLogSegmentsTable>[];
  trim: string[];
  retention: Retention;
}

export async function writeSegments(db: Db, { segments, trim, retention }: SegmentWrite): Promise<void> {
  for (let i = 0; i < segments.length; i += INSERT_ROWS)
    await db
      .insertInto('request_log_segments')
      .values(segments.slice(i, i + INSERT_ROWS))
      .execute();
  for (const projectId of trim) await trimProject(db, projectId, retention);
}

/**
 * Every project's segments older than the retention (their newest request is). Segments are
 * written in about the order their requests were made, so the walk up `seq` from the oldest
 * stops at the first young one: the old ones before it go (a straggler goes at the next prune).
 */
export async function pruneRequestLog(db: Db, before: string): Promise<void> {
  const young = await db
    .selectFrom('request_log_segments')
    .select('seq')
    .where('last_created', '>=', before)
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
  let q = db.deleteFrom('request_log_segments').where('last_created', '<', before);
  if (young) q = q.where('seq', '<', young.seq);
  await q.execute();
}

/**
 * Trims one project's log: its segments older than the retention, then those wholly past its
 * newest `maxRows` requests, the segment that straddles the limit cut to its newest requests, in
 * one transaction. The limit's segment is found by a running sum of the segments' rows, newest
 * first, on the (project_id, seq) index.
 */
export async function trimProject(db: Db, projectId: string, { maxRows, before }: Retention): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const firstYoung = trx
      .selectFrom('request_log_segments')
      .select('seq')
      .where('project_id', '=', projectId)
      .where('last_created', '>=', before)
      .orderBy('seq')
      .limit(1);
    await trx
      .deleteFrom('request_log_segments')
      .where('project_id', '=', projectId)
      .where('last_created', '<', before)
      .where('seq', '<', firstYoung)
      .execute();
    const edge = await trx
      .selectFrom((eb) =>
        eb
          .selectFrom('request_log_segments')
          .select(['seq', 'rows'])
          .select(sql<number>`sum(rows) over (order by seq desc)`.as('newer'))
          .where('project_id', '=', projectId)
          .as('s'),
      )
      .selectAll()
      .where('newer', '>', maxRows)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!edge) return;
    // The edge segment keeps the requests that bring the project to maxRows; older segments go.
    const keep = maxRows - (Number(edge.newer) - edge.rows);
    await trx
      .deleteFrom('request_log_segments')
      .where('project_id', '=', projectId)
      .where('seq', keep > 0 ? '<' : '<=', edge.seq)
      .execute();
    if (keep > 0) {
      const { body } = await trx
        .selectFrom('request_log_segments')
        .select('body')
        .where('seq', '=', edge.seq)
        .executeTakeFirstOrThrow();
      await trx
        .updateTable('request_log_segments')
        .set(keepNewest(projectId, body, keep))
        .where('seq', '=', edge.seq)
        .execute();
    }
  });
}
