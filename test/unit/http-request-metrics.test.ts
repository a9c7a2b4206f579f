import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { httpRequestsText, observeRequest } from '../../src/metrics/http-requests.js';

// The HTTP series are counted in mediad's own cells and written at scrape time. What they write
// must be what prom-client wrote for the same requests before (the series, their labels and their
// values), so dashboards and alerts built on GET /metrics see no change.

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Sample lines as `name{labels sorted} value`, comments and blank lines left out, sorted. */
function samples(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(l);
      assert.ok(m, `not a sample line: ${l}`);
      const labels = [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => `${x[1]}="${x[2]}"`).sort();
      return `${m[1]}{${labels.join(',')}} ${Number(m[3])}`;
    })
    .sort();
}

/** `# HELP` and `# TYPE` lines of a text, sorted. */
const comments = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('# '))
    .sort();

describe('the HTTP request series of GET /metrics', () => {
  it('are the series prom-client wrote for the same requests', async () => {
    const registry = new Registry();
    const duration = new Histogram({
      name: 'mediad_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
      buckets: BUCKETS,
    });
    const total = new Counter({
      name: 'mediad_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    // Durations on each bucket's bound (le is inclusive), between bounds, and past the last.
    const requests: [string, string, number, number][] = [
      ['GET', '/files/:id', 200, 1],
      ['GET', '/files/:id', 200, 0.4],
      ['GET', '/files/:id', 200, 2.5],
      ['GET', '/files/:id', 404, 7],
      ['GET', '/files', 200, 120],
      ['POST', '/tasks', 201, 45_000],
      ['GET', 'unmatched', 404, 0],
      ['GET', '/a "quoted" \\ route', 200, 10],
    ];
    for (const [method, route, status, ms] of requests) {
      observeRequest(method, route, status, ms);
      duration.observe({ method, route, status: String(status) }, ms / 1000);
      total.inc({ method, route, status: String(status) });
    }
    const ours = httpRequestsText();
    const theirs = await registry.metrics();
    assert.deepEqual(samples(ours), samples(theirs));
    assert.deepEqual(comments(ours), comments(theirs));
    assert.match(
      ours,
      /^mediad_http_request_duration_seconds_bucket\{le="0\.001",method="GET",route="\/files\/:id",status="200"\} 2$/m,
    );
    assert.match(ours, /route="\/a \\"quoted\\" \\\\ route"/, 'label values escaped as the text format says');
  });
});
