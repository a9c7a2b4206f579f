import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runFuzz, startFuzzEnv, type FuzzEnv } from '../helpers/fuzz.js';

// A small, fixed-seed run of the API fuzzer (test/helpers/fuzz.ts) in every npm test; larger
// runs with any seed: npm run fuzz -- --seed N --count N.
const SEED = 20261123;
const COUNT = 500;
const RAW = 60;

let env: FuzzEnv;
before(async () => {
  env = await startFuzzEnv();
});
after(() => env.close());

it(`finds no 5xx, no answer off /openapi.json or outside its generation, no slow /health (seed ${SEED}, ${COUNT} requests, ${RAW} raw cases)`, async (t) => {
  const lines: string[] = [];
  const result = await runFuzz(env, { seed: SEED, count: COUNT, rawCount: RAW, log: (l) => lines.push(l) });
  t.diagnostic(
    `seed ${SEED}: ${result.requests} requests ${JSON.stringify(result.statuses)}, ${result.rawCases} raw cases, slowest /health ${Math.round(result.slowestHealthMs)} ms`,
  );
  assert.equal(
    result.failures.length,
    0,
    `fuzz failures (replay: npm run fuzz -- --seed ${SEED} --count ${COUNT} --raw ${RAW}):\n${lines.join('\n')}`,
  );
  // The run reached past validation: some requests succeeded, and most were refused for cause.
  assert.ok((result.statuses['2xx'] ?? 0) > COUNT / 20, JSON.stringify(result.statuses));
  assert.ok((result.statuses['4xx'] ?? 0) > COUNT / 3, JSON.stringify(result.statuses));
});
