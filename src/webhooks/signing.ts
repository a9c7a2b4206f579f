import { createHmac } from 'node:crypto';

// Standard Webhooks (https://www.standardwebhooks.com): the signed content is
// "<webhook-id>.<webhook-timestamp>.<body>", HMAC-SHA256 with the secret's bytes
// (base64 after the whsec_ prefix), sent as "v1,<base64 signature>". During a secret
// rotation both secrets sign, space-separated, so receivers can switch at their pace.

export function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export function webhookHeaders(
  secrets: string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' '),
  };
}
