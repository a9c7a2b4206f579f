import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '../../src/ratelimit/stores.js';
import { decide, WINDOW_MS, windowIndex } from '../../src/ratelimit/window.js';

const T0 = 1_000 * WINDOW_MS; // a window boundary

describe('sliding window decision', () => {
  it('allows up to the limit in a fresh window and counts remaining down', () => {
    for (let n = 1; n <= 5; n++) {
      const d = decide(5, T0 + 10_000, { current: n, previous: 0 });
      assert.equal(d.allowed, true);
      assert.equal(d.remaining, 5 - n);
      assert.equal(d.resetSeconds, 50);
      assert.equal(d.retryAfterSeconds, undefined);
    }
  });

  it('refuses past the limit; Retry-After is the next window plus the slide-out', () => {
    const d = decide(5, T0 + 10_000, { current: 6, previous: 0 });
    assert.equal(d.allowed, false);
    assert.equal(d.remaining, 0);
    // 50 s to the rollover, then 6 * (1 - t/60) + 1 <= 5 needs t >= 20 s.
    assert.equal(d.retryAfterSeconds, 70);
    assert.equal(d.resetSeconds, 70);
  });

  it('weights the previous window by its overlap with the last 60 s', () => {
    // 15 s into the window: 8 of the previous 10 still count, plus 3 now = 11 > 10.
    const refused = decide(10, T0 + 15_000, { current: 3, previous: 10 });
    assert.equal(refused.allowed, false);
    // One more fits once 10 * (1 - t/60) + 3 + 1 <= 10, i.e. t >= 24 s: 9 s from now.
    assert.equal(refused.retryAfterSeconds, 9);
    const later = decide(10, T0 + 30_000, { current: 3, previous: 10 });
    assert.equal(later.allowed, true);
    assert.equal(later.remaining, 2);
  });

  it('a client that waits Retry-After is allowed', () => {
    for (const [elapsed, counts] of [
      [1_000, { current: 7, previous: 0 }],
      [45_500, { current: 2, previous: 20 }],
      [59_999, { current: 6, previous: 30 }],
      [20_000, { current: 4, previous: 3 }],
    ] as const) {
      const d = decide(5, T0 + elapsed, counts);
      assert.equal(d.allowed, false);
      const at = T0 + elapsed + d.retryAfterSeconds! * 1000;
      const rolled = windowIndex(at) !== windowIndex(T0 + elapsed);
      const next = rolled
        ? { current: 1, previous: windowIndex(at) - windowIndex(T0) === 1 ? counts.current : 0 }
        : { current: counts.current + 1, previous: counts.previous };
      assert.equal(decide(5, at, next).allowed, true, `elapsed ${elapsed}`);
      const early = T0 + elapsed + (d.retryAfterSeconds! - 1) * 1000;
      if (d.retryAfterSeconds! > 1 && windowIndex(early) === windowIndex(T0 + elapsed)) {
        assert.equal(
          decide(5, early, { current: counts.current + 1, previous: counts.previous }).allowed,
          false,
          `early ${elapsed}`,
        );
      }
    }
  });
});

describe('memory store', () => {
  it('counts per key and rolls the window over', () => {
    const s = new MemoryStore();
    assert.deepEqual(s.hit('a', 10), { current: 1, previous: 0 });
    assert.deepEqual(s.hit('a', 10), { current: 2, previous: 0 });
    assert.deepEqual(s.hit('b', 10), { current: 1, previous: 0 });
    assert.deepEqual(s.hit('a', 11), { current: 1, previous: 2 });
    // A gap of more than one window forgets the old count.
    assert.deepEqual(s.hit('a', 13), { current: 1, previous: 0 });
  });
});
