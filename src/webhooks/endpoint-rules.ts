import net from 'node:net';
import { AppError } from '../errors.js';
import { classifyAddress, describeClass, isAllowedHost, parseFetchUrl, type UrlPolicy } from '../net/index.js';
import { EVENT_TYPES } from '../events/record.js';

// Pure rules of webhook endpoints: which URLs are accepted at creation and which events an
// endpoint receives. Kept free of the database so they are unit-tested directly.

export const ALL_EVENTS = '*';
export const MAX_URL_LENGTH = 2048;

const invalid = (field: string, message: string) =>
  new AppError('validation_failed', `the request is not valid: ${field} ${message}`, { details: [{ field, message }] });

/**
 * Refuses URLs that can never be delivered: not http(s), credentials in the URL, or an IP
 * literal / localhost name the outbound policy refuses. Names are not resolved here (DNS can
 * change); the guarded client checks every address again at delivery time. Used for webhook
 * endpoints (`url`) and task webhooks (`webhook_url`).
 */
export function checkEndpointUrl(
  raw: string,
  policy: Pick<UrlPolicy, 'allowPrivate' | 'allowHosts'>,
  field = 'url',
): string {
  let url: URL;
  try {
    url = parseFetchUrl(raw);
  } catch (err) {
    throw invalid(field, err instanceof AppError ? err.message : 'is not a valid URL');
  }
  if (raw.length > MAX_URL_LENGTH) throw invalid(field, `is longer than ${MAX_URL_LENGTH} characters`);
  if (policy.allowPrivate || isAllowedHost(url, policy.allowHosts)) return url.href;
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost'))
    throw invalid(
      field,
      `points at ${host}, a loopback name; list its host:port in MEDIAD_ALLOWED_URL_HOSTS (or set MEDIAD_ALLOW_PRIVATE_URLS=true) and restart mediad to allow it`,
    );
  if (net.isIP(host) !== 0) {
    const cls = classifyAddress(host);
    if (cls !== 'public')
      throw invalid(
        field,
        `points at ${host}, which is ${describeClass(cls)}; list its host:port in MEDIAD_ALLOWED_URL_HOSTS (or set MEDIAD_ALLOW_PRIVATE_URLS=true) and restart mediad to allow it`,
      );
  }
  return url.href;
}

/** Stored form of a subscription: "*" alone when present, otherwise the types without duplicates. */
export function normaliseEvents(events: readonly string[]): string[] {
  if (events.includes(ALL_EVENTS)) return [ALL_EVENTS];
  const unknown = events.filter((e) => !(EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) {
    throw new AppError(
      'validation_failed',
      `the request is not valid: events has unknown types ${unknown.join(', ')}`,
      {
        details: unknown.map((e) => ({
          field: 'events',
          message: `${e} is not an event type (one of ${EVENT_TYPES.join(', ')}, or *)`,
        })),
      },
    );
  }
  return [...new Set(events)];
}

export function subscribes(events: readonly string[], type: string): boolean {
  return events.includes(ALL_EVENTS) || events.includes(type);
}
