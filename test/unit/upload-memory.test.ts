import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import {
  COLLECT_EVERY_BYTES,
  FULL_COLLECT_EVERY_BYTES,
  bodyReceived,
  uploadCollections,
  uploadFullCollections,
} from '../../src/api/upload-memory.js';

// An upload's TLS records are buffers outside V8's heap that V8 frees only when it collects their
// small JS objects: without the collection every COLLECT_EVERY_BYTES of body, dead records piled up
// to V8's 64 MB external-memory limit during a large upload (docs/benchmarks.md, issue 25).

const MB = 1024 * 1024;

describe('upload body memory', () => {
  it('collects the young generation once per COLLECT_EVERY_BYTES of body, not per chunk', () => {
    const before = uploadCollections();
    const chunk = 16 * 1024;
    for (let sent = 0; sent < 3 * COLLECT_EVERY_BYTES; sent += chunk) bodyReceived(chunk);
    assert.equal(uploadCollections() - before, 3);
  });

  it('collects the whole heap once per FULL_COLLECT_EVERY_BYTES of body, in place of a young collection', () => {
    const young = uploadCollections();
    const full = uploadFullCollections();
    const periods = 2 * (FULL_COLLECT_EVERY_BYTES / COLLECT_EVERY_BYTES);
    for (let i = 0; i < periods; i++) bodyReceived(COLLECT_EVERY_BYTES);
    assert.equal(uploadFullCollections() - full, 2);
    assert.equal(uploadCollections() - young, periods - 2);
  });

  it('frees dead 16 KiB records as the body arrives, long before V8 would on its own', async () => {
    bodyReceived(COLLECT_EVERY_BYTES); // the collector is set up, and the young generation emptied
    await sleep(50);
    const base = process.memoryUsage().arrayBuffers;
    // 24 MiB of records, each dropped at once, as a body's written records are: under V8's own
    // thresholds (the young generation holds far more of their small objects; 64 MB external).
    let kept = 0;
    for (let i = 0; i < (24 * MB) / (16 * 1024); i++) kept += Buffer.alloc(16 * 1024, i)[0]!;
    assert.ok(kept >= 0);
    const piled = process.memoryUsage().arrayBuffers - base;
    assert.ok(piled > 20 * MB, `the dead records are still counted before a collection (${piled} bytes)`);
    bodyReceived(COLLECT_EVERY_BYTES);
    // The backing stores are released by V8's sweeper, concurrently: wait for it.
    let left = piled;
    for (let i = 0; i < 40 && left > 4 * MB; i++) {
      await sleep(25);
      left = process.memoryUsage().arrayBuffers - base;
    }
    assert.ok(left < 4 * MB, `${left} bytes of dead records still held after the collection`);
  });
});
