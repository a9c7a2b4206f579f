import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { AppError } from '../../src/errors.js';
import { endpointSecrets, toEndpointObject } from '../../src/webhooks/endpoints.js';
import { newWebhookSecret } from '../../src/webhooks/secrets.js';
import { checkEndpointUrl, normaliseEvents, subscribes } from '../../src/webhooks/endpoint-rules.js';
import { webhookHeaders } from '../../src/webhooks/signing.js';

const strictPolicy = { allowPrivate: false, allowHosts: [] as string[] };

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'validation_failed');
    return err.details?.[0]?.field ?? '';
  }
  assert.fail('expected a refusal');
}

describe('endpoint URL rules', () => {
  it('accepts public http(s) URLs and normalises them', () => {
    assert.equal(
      checkEndpointUrl('https://Hooks.Example.com/in?x=1', strictPolicy),
      'https://hooks.example.com/in?x=1',
    );
    assert.equal(checkEndpointUrl('http://93.184.216.34:8080/h', strictPolicy), 'http://93.184.216.34:8080/h');
  });

  it('refuses other schemes, credentials, garbage and private or loopback literals', () => {
    for (const url of [
      'ftp://example.com/',
      'javascript:alert(1)',
      'https://u:p@example.com/',
      'nope',
      'http://127.0.0.1/',
      'http://[::1]/',
      'http://169.254.169.254/latest',
      'http://192.168.1.10/',
      'http://localhost:8080/',
      'http://api.localhost/',
      `https://example.com/${'a'.repeat(2100)}`,
    ]) {
      assert.equal(
        refusal(() => checkEndpointUrl(url, strictPolicy)),
        'url',
        url,
      );
    }
  });

  it('lets the operator allow private receivers', () => {
    assert.ok(checkEndpointUrl('http://127.0.0.1:9000/h', { allowPrivate: false, allowHosts: ['127.0.0.1'] }));
    assert.ok(checkEndpointUrl('http://localhost/h', { allowPrivate: true, allowHosts: [] }));
    assert.equal(
      refusal(() => checkEndpointUrl('http://10.0.0.1/h', { allowPrivate: false, allowHosts: ['127.0.0.1'] })),
      'url',
    );
  });
});

describe('event subscriptions', () => {
  it('stores * alone, drops duplicates and refuses unknown types', () => {
    assert.deepEqual(normaliseEvents(['media.created', '*']), ['*']);
    assert.deepEqual(normaliseEvents(['task.failed', 'task.failed', 'media.created']), [
      'task.failed',
      'media.created',
    ]);
    assert.equal(
      refusal(() => normaliseEvents(['media.created', 'media.exploded'])),
      'events',
    );
  });

  it('matches a type or everything', () => {
    assert.ok(subscribes(['*'], 'task.completed'));
    assert.ok(subscribes(['media.created'], 'media.created'));
    assert.ok(!subscribes(['task.completed'], 'media.created'));
  });
});

describe('endpoint secrets', () => {
  const base = {
    id: 'we_x',
    project_id: 'prj_x',
    url: 'https://example.com',
    events: '["*"]',
    description: null,
    status: 'active' as const,
    failed_deliveries: 0,
    created: '2026-01-01T00:00:00.000Z',
    updated: '2026-01-01T00:00:00.000Z',
    disabled_reason: null,
    disabled_at: null,
  };

  it('signs with the previous secret for 24 h after a rotation, and both signatures verify', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const row = { ...base, secret: current, secret_previous: previous, secret_rotated: '2026-01-01T00:00:00.000Z' };
    const during = new Date('2026-01-01T23:59:00Z');
    assert.deepEqual(endpointSecrets(row, during), [current, previous]);
    assert.deepEqual(endpointSecrets(row, new Date('2026-01-02T00:00:01Z')), [current]);
    assert.equal(toEndpointObject(row, during).previous_secret_expires, '2026-01-02T00:00:00.000Z');
    assert.equal(toEndpointObject(row, new Date('2026-01-03T00:00:00Z')).previous_secret_expires, undefined);

    const body = JSON.stringify({ id: 'evt_1', object: 'event' });
    const headers = webhookHeaders(endpointSecrets(row, new Date()), 'evt_1', Math.floor(Date.now() / 1000), body);
    // "now" is past the overlap of this fixed rotation date, so only the current secret signs.
    assert.equal(headers['webhook-signature']!.split(' ').length, 1);
    const fresh = { ...row, secret_rotated: new Date().toISOString() };
    const both = webhookHeaders(endpointSecrets(fresh, new Date()), 'evt_1', Math.floor(Date.now() / 1000), body);
    assert.equal(both['webhook-signature']!.split(' ').length, 2);
    for (const s of [current, previous]) assert.deepEqual(new Webhook(s).verify(body, both), JSON.parse(body));
  });

  it('shows the secret only when asked', () => {
    const row = { ...base, secret: newWebhookSecret(), secret_previous: null, secret_rotated: null };
    assert.ok(!('secret' in toEndpointObject(row, new Date())));
    assert.equal(toEndpointObject(row, new Date(), true).secret, row.secret);
  });
});
