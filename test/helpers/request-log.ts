import type { Db } from '../../src/db/connect.js';
import { decodeSegment, SegmentBuilder, type LoggedRequest } from '../../src/db/request-log-segments.js';

// The request log as stored: a project's requests in the order they were written (segments by
// seq, each segment's lines in order), and requests written directly, a segment each.

/** A project's segments in the order they were written. */
export const storedSegments = (db: Db, projectId: string) =>
  db.selectFrom('request_log_segments').selectAll().where('project_id', '=', projectId).orderBy('seq').execute();

export async function storedRequests(db: Db, projectId: string): Promise<LoggedRequest[]> {
  return (await storedSegments(db, projectId)).flatMap((s) => decodeSegment(s.body));
}

export const logged = (r: Partial<LoggedRequest> & Pick<LoggedRequest, 'id' | 'created'>): LoggedRequest => ({
  method: 'GET',
  route: '/files',
  path: '/files',
  status: 200,
  duration_ms: 1,
  actor: 'key',
  key_id: null,
  user_id: null,
  ...r,
});

/** Writes each request as a segment of its own, in order. */
export async function writeRequests(db: Db, projectId: string, requests: LoggedRequest[]): Promise<void> {
  for (const r of requests) {
    const b = new SegmentBuilder(projectId);
    b.addRequest(r);
    await db.insertInto('request_log_segments').values(b.row()).execute();
  }
}
