import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeSegment, lineMatcher, SegmentBuilder, type LoggedRequest } from '../../src/db/request-log-segments.js';
import { logged } from '../helpers/request-log.js';

// The request log's line filter (GET /requests' filters, tested on the lines without decoding
// them) against the decoded requests, including paths that hold what the fields look like.

const t0 = Date.UTC(2026, 10, 1);
const requests: LoggedRequest[] = [
  logged({ id: 'req_a', created: new Date(t0).toISOString(), key_id: 'key_1' }),
  logged({ id: 'req_b', created: new Date(t0 + 1).toISOString(), method: 'POST', status: 201, key_id: 'key_12' }),
  logged({
    id: 'req_c',
    created: new Date(t0 + 2).toISOString(),
    path: '/files?q=\tPOST\t&k=\tkey\tkey_1',
    status: 404,
    actor: 'session',
    user_id: 'usr_1',
  }),
  logged({ id: 'req_d', created: new Date(t0 + 3).toISOString(), status: 500, actor: 'signed_url', route: null }),
];
const b = new SegmentBuilder('prj_x');
for (const r of requests) b.addRequest(r);
const { body } = b.row();
const lines = body.split('\n');

const ids = (f: Parameters<typeof lineMatcher>[0]) => lines.filter(lineMatcher(f)).map((l) => decodeSegment(l)[0]!.id);

it('reads back every field', () => {
  assert.deepEqual(decodeSegment(body), requests);
});

it('filters by key, user, method, status class and time without false matches in the path', () => {
  assert.deepEqual(ids({}), ['req_a', 'req_b', 'req_c', 'req_d']);
  assert.deepEqual(ids({ keyId: 'key_1' }), ['req_a'], 'not key_12, not the path');
  assert.deepEqual(ids({ userId: 'usr_1' }), ['req_c']);
  assert.deepEqual(ids({ keyId: 'key_1', userId: 'usr_1' }), []);
  assert.deepEqual(ids({ method: 'POST' }), ['req_b'], 'not the path');
  assert.deepEqual(ids({ statusClass: '2xx' }), ['req_a', 'req_b']);
  assert.deepEqual(ids({ statusClass: '5xx' }), ['req_d']);
  assert.deepEqual(ids({ afterMs: t0, beforeMs: t0 + 3 }), ['req_b', 'req_c']);
  assert.deepEqual(ids({ method: 'GET', statusClass: '4xx' }), ['req_c']);
});
