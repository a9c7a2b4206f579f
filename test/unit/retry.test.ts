import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { MediaTransformError } from '../../src/media/index.js';
import { backoffDelay, classifyFailure } from '../../src/queue/retry.js';
import { nextDelayMs, parseRetryAfter, RETRY_SCHEDULE_MS } from '../../src/webhooks/schedule.js';

describe('task retry policy', () => {
  it('retries what may pass next time and fails the rest at once', () => {
    for (const code of ['source_unreachable', 'source_timeout'] as const)
      assert.equal(classifyFailure(new AppError(code, 'x')).transient, true, code);
    for (const code of ['source_rejected', 'source_refused', 'media_unsupported', 'media_limit_exceeded'] as const)
      assert.equal(classifyFailure(new AppError(code, 'x')).transient, false, code);
    const noAudio = classifyFailure(new MediaTransformError('no_audio_stream', 'no audio'));
    assert.deepEqual([noAudio.code, noAudio.transient], ['no_audio_stream', false]);
    assert.equal(classifyFailure(Object.assign(new Error('t'), { reason: 'timeout' })).code, 'task_timeout');
    const unknown = classifyFailure(new Error('/secret/path exploded'));
    assert.equal(unknown.code, 'internal_error');
    assert.doesNotMatch(unknown.message, /secret/);
  });

  it('reads the flag the error was made with', () => {
    assert.equal(new AppError('internal_error', 'x').transient, true);
    assert.equal(new AppError('validation_failed', 'x').transient, false);
    assert.equal(classifyFailure(new AppError('service_unavailable', 'x', { transient: false })).transient, false);
    assert.equal(classifyFailure(new MediaTransformError('transform_failed', 'x')).transient, false);
  });

  it('backs off exponentially with bounded jitter', () => {
    const policy = { maxAttempts: 5, backoffMs: 1000, timeoutMs: 1 };
    assert.equal(
      backoffDelay(policy, 1, () => 0.5),
      1000,
    );
    assert.equal(
      backoffDelay(policy, 3, () => 0.5),
      4000,
    );
    assert.equal(
      backoffDelay(policy, 3, () => 0),
      3200,
    );
    assert.equal(
      backoffDelay(policy, 3, () => 1),
      4800,
    );
  });
});

describe('webhook schedule', () => {
  it('follows immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then stops', () => {
    assert.deepEqual(
      RETRY_SCHEDULE_MS.map((_, i) => nextDelayMs(i, null, () => 0.5)),
      [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    );
    assert.equal(nextDelayMs(RETRY_SCHEDULE_MS.length), null);
    assert.equal(
      nextDelayMs(1, 60_000, () => 0.5),
      60_000,
      'Retry-After wins when later',
    );
  });

  it('reads Retry-After as seconds or a date', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000);
    assert.equal(parseRetryAfter('soon', now), null);
  });
});
