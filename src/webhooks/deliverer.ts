import type { Deps, Outbound } from '../deps.js';
import { iso } from '../deps.js';
import { isAppError } from '../errors.js';
import { newId } from '../ids.js';
import type { WebhookDeliveriesTable } from '../db/schema.js';
import { createGuardedClient } from '../net/index.js';
import { Poller } from '../poller.js';
import { WEBHOOK_READY } from '../signals.js';
import { NOT_SENT_DELETED, NOT_SENT_DISABLED } from './deliveries.js';
import { endpointSecrets, recordEndpointOutcome } from './endpoints.js';
import { projectSigningSecrets } from './secrets.js';
import { MAX_ATTEMPTS, nextDelayMs, parseRetryAfter } from './schedule.js';
import { webhookHeaders } from './signing.js';
import { countWebhookDelivery } from '../metrics/registry.js';

const LEASE_MS = 60_000;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'mediad-webhooks/0.1 (+https://github.com/mediad)';

/**
 * Sends webhook deliveries from their table: each due row is leased, POSTed through the
 * guarded client, and either marked delivered, scheduled again, or failed when the
 * schedule is exhausted (or the receiver answers 410 Gone). Every attempt is recorded.
 * State lives in rows, so a restart resumes the schedule where it was. Two kinds share it:
 * task webhooks (task_id, project secret) and endpoint deliveries (endpoint_id, event_id,
 * the endpoint's secrets; the endpoint's status and failure count are kept here too).
 */
export class WebhookDeliverer {
  private inFlight = 0;
  private readonly poller: Poller;

  private readonly client: Pick<Outbound, 'request'> & { close?(): Promise<void> };
  private readonly ownsClient: boolean;

  /**
   * Webhooks must not follow redirects (a 3xx is a failed attempt, and the signed body must not
   * be replayed elsewhere), and the shared client follows them; so unless a client is given,
   * the deliverer uses its own guarded client with the same URL policy and maxRedirects 0.
   */
  constructor(
    private readonly deps: Deps,
    private readonly opts: { concurrency: number; pollMs: number; client?: Pick<Outbound, 'request'> },
  ) {
    this.ownsClient = opts.client === undefined;
    this.client =
      opts.client ??
      createGuardedClient({
        ...deps.config.fetch,
        maxRedirects: 0,
        maxBytes: MAX_RESPONSE_BYTES,
        userAgent: USER_AGENT,
      });
    this.poller = new Poller({
      signal: WEBHOOK_READY,
      pollMs: opts.pollMs,
      pass: () => this.pump(),
      onError: (err) => deps.log.error({ err }, 'claiming a webhook delivery failed'),
    });
  }

  start(): void {
    this.poller.start();
  }

  async stop(): Promise<void> {
    await this.poller.stop();
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 20));
    if (this.ownsClient) await this.client.close?.();
  }

  /** Starts deliveries while there are due ones and free slots; each one ending asks for another pass. */
  private async pump(): Promise<void> {
    while (!this.poller.isStopped && this.inFlight < this.opts.concurrency) {
      const row = await this.claim();
      if (!row) break;
      this.inFlight++;
      void this.deliver(row)
        .catch((err: unknown) => this.deps.log.error({ err, delivery: row.id }, 'webhook delivery crashed'))
        .finally(() => {
          this.inFlight--;
          this.poller.wake();
        });
    }
  }

  private async claim(): Promise<WebhookDeliveriesTable | undefined> {
    const now = this.deps.clock.now();
    return this.deps.db
      .updateTable('webhook_deliveries')
      .set({ lease_expires: iso(new Date(now.getTime() + LEASE_MS)), updated: iso(now) })
      .where('id', '=', (eb) =>
        eb
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('status', '=', 'pending')
          .where('next_attempt', '<=', iso(now))
          .where((w) => w.or([w('lease_expires', 'is', null), w('lease_expires', '<', iso(now))]))
          .orderBy('next_attempt')
          .limit(1),
      )
      .where((w) => w.or([w('lease_expires', 'is', null), w('lease_expires', '<', iso(now))]))
      .returningAll()
      .executeTakeFirst();
  }

  /** Who signs and which webhook-id: the endpoint's secrets and the event id, or the project's secrets for task webhooks. */
  private async target(
    row: WebhookDeliveriesTable,
  ): Promise<{ secrets: string[]; webhookId: string } | { notSent: string }> {
    if (row.endpoint_id === null)
      return {
        secrets: await projectSigningSecrets(this.deps.db, row.project_id, this.deps.clock.now()),
        webhookId: row.id,
      };
    const endpoint = await this.deps.db
      .selectFrom('webhook_endpoints')
      .select(['status', 'secret', 'secret_previous', 'secret_rotated'])
      .where('id', '=', row.endpoint_id)
      .executeTakeFirst();
    if (!endpoint) return { notSent: NOT_SENT_DELETED };
    if (endpoint.status !== 'active') return { notSent: NOT_SENT_DISABLED };
    // The event id is stable across retries and manual re-sends, so receivers can dedupe by it.
    return { secrets: endpointSecrets(endpoint, this.deps.clock.now()), webhookId: row.event_id ?? row.id };
  }

  private async deliver(row: WebhookDeliveriesTable): Promise<void> {
    const { deps } = this;
    const started = Date.now();
    const attempt = row.attempts + 1;
    let statusCode: number | null = null;
    let error: string | null = null;
    let retryAfter: number | null = null;
    let notSent = false;
    // The guard refused the address (private, loopback...): no later attempt can succeed.
    let refused = false;
    try {
      const target = await this.target(row);
      if ('notSent' in target) {
        notSent = true;
        error = target.notSent;
      } else {
        const timestamp = Math.floor(deps.clock.now().getTime() / 1000);
        const res = await this.client.request(row.url, {
          method: 'POST',
          headers: webhookHeaders(target.secrets, target.webhookId, timestamp, row.payload),
          body: row.payload,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        statusCode = res.status;
        retryAfter = parseRetryAfter(res.headers['retry-after'], deps.clock.now());
        await drain(res.body);
        if (res.status < 200 || res.status > 299) error = `the receiver answered ${res.status}`;
      }
    } catch (err) {
      error = isAppError(err) ? err.message : err instanceof Error ? err.message : String(err);
      refused = isAppError(err) && err.code === 'source_refused';
      // The client refuses to follow (maxRedirects 0): say so plainly rather than "too many redirects".
      if (isAppError(err) && err.message.startsWith('too many redirects'))
        error = 'the receiver answered with a redirect (3xx); webhooks do not follow redirects: use the final URL';
    }
    const now = deps.clock.now();
    const delivered = error === null;
    const delay = delivered || notSent || refused || statusCode === 410 ? null : nextDelayMs(attempt, retryAfter);
    const status = delivered ? 'delivered' : delay === null ? 'failed' : 'pending';
    // Only the last scheduled attempt counts toward disabling an endpoint; later manual retries do not.
    const outcome = delivered
      ? 'delivered'
      : notSent
        ? 'other'
        : statusCode === 410
          ? 'gone'
          : refused || (delay === null && attempt === MAX_ATTEMPTS)
            ? 'exhausted'
            : 'other';
    await deps.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_attempts')
        .values({
          id: newId('attempt'),
          delivery_id: row.id,
          attempt,
          status_code: statusCode,
          error,
          duration_ms: notSent ? 0 : Date.now() - started,
          created: iso(now),
        })
        .execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status,
          attempts: attempt,
          lease_expires: null,
          updated: iso(now),
          next_attempt: delay === null ? row.next_attempt : iso(new Date(now.getTime() + delay)),
        })
        .where('id', '=', row.id)
        .execute();
      if (row.endpoint_id !== null) await recordEndpointOutcome(deps.log, trx, row.endpoint_id, outcome, now);
    });
    countWebhookDelivery(status); // metrics
    deps.log[delivered ? 'info' : 'warn'](
      { delivery: row.id, endpoint: row.endpoint_id ?? undefined, url: row.url, attempt, statusCode, error, status },
      'webhook attempt',
    );
  }
}

/** Reads at most MAX_RESPONSE_BYTES of the answer so a huge or endless body cannot hold the slot. */
async function drain(body: AsyncIterable<Buffer>): Promise<void> {
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.length;
    if (seen > MAX_RESPONSE_BYTES) break;
  }
}
