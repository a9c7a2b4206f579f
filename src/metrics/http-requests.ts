// The HTTP series of GET /metrics (requests by method, route pattern and status, and their
// durations), counted in plain cells and written in Prometheus' text format (0.0.4) when scraped.
// Not prom-client: its histogram hashes the labels into a string on every observe, even through a
// pre-bound child, and that was 2.5% of GET /files/{id}'s main thread in issue 26's profile; here a
// request costs three Map lookups on values it already has and one bucket increment.

const DURATION = 'mediad_http_request_duration_seconds';
const TOTAL = 'mediad_http_requests_total';
/** Upper bounds of the duration buckets, in seconds (the +Inf bucket follows). */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** One series: per-bucket counts (not cumulative; the last is +Inf), their sum and count. */
interface Cell {
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** route pattern → method → status → cell: no string is built per request. */
const cells = new Map<string, Map<string, Map<number, Cell>>>();

/** Route label for requests that matched no route: never the raw URL (unbounded cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

export function observeRequest(method: string, route: string, status: number, ms: number): void {
  let byMethod = cells.get(route);
  if (!byMethod) cells.set(route, (byMethod = new Map()));
  let byStatus = byMethod.get(method);
  if (!byStatus) byMethod.set(method, (byStatus = new Map()));
  let cell = byStatus.get(status);
  if (!cell) byStatus.set(status, (cell = { counts: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 }));
  const seconds = ms / 1000;
  let i = 0;
  while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
  cell.counts[i]!++;
  cell.sum += seconds;
  cell.count++;
}

/** A label value as the text format escapes it (backslash, double quote, line feed). */
function escapeLabel(v: string): string {
  return v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** The two metric families, in the text format, each series' lines together. */
export function httpRequestsText(): string {
  const duration = [
    `# HELP ${DURATION} Time to answer an HTTP request, by method, route pattern and status.`,
    `# TYPE ${DURATION} histogram`,
  ];
  const total = [
    `# HELP ${TOTAL} HTTP requests answered, by method, route pattern and status.`,
    `# TYPE ${TOTAL} counter`,
  ];
  for (const [route, byMethod] of cells) {
    for (const [method, byStatus] of byMethod) {
      for (const [status, cell] of byStatus) {
        const labels = `method="${escapeLabel(method)}",route="${escapeLabel(route)}",status="${status}"`;
        let cumulative = 0;
        for (const [i, n] of cell.counts.entries()) {
          cumulative += n;
          const le = i < BUCKETS.length ? String(BUCKETS[i]) : '+Inf';
          duration.push(`${DURATION}_bucket{le="${le}",${labels}} ${cumulative}`);
        }
        duration.push(`${DURATION}_sum{${labels}} ${cell.sum}`, `${DURATION}_count{${labels}} ${cell.count}`);
        total.push(`${TOTAL}{${labels}} ${cell.count}`);
      }
    }
  }
  return `${duration.join('\n')}\n\n${total.join('\n')}\n`;
}
