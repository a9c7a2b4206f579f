import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { runFuzz, startFuzzEnv } from './fuzz.js';

// npm run fuzz -- [--seed N] [--count N] [--raw N]: a larger fuzz run than npm test's. Without
// --seed a random one is drawn; it is printed first, so a failing run can be replayed exactly.

const { values } = parseArgs({
  options: { seed: { type: 'string' }, count: { type: 'string', default: '5000' }, raw: { type: 'string' } },
});
const seed = values.seed === undefined ? randomInt(2 ** 32) : Number(values.seed);
const count = Number(values.count);
const rawCount = values.raw === undefined ? Math.ceil(count / 10) : Number(values.raw);
if (
  !Number.isInteger(seed) ||
  seed < 0 ||
  seed >= 2 ** 32 ||
  !Number.isInteger(count) ||
  count < 0 ||
  !Number.isInteger(rawCount) ||
  rawCount < 0
) {
  console.error('usage: npm run fuzz -- [--seed 0..4294967295] [--count N] [--raw N]');
  process.exit(2);
}
console.log(
  `fuzz seed ${seed}: ${count} API requests, ${rawCount} raw HTTP cases (replay: npm run fuzz -- --seed ${seed} --count ${count} --raw ${rawCount})`,
);
const started = Date.now();
const env = await startFuzzEnv();
try {
  const result = await runFuzz(env, { seed, count, rawCount, log: (line) => console.log(line) });
  console.log(
    `seed ${seed}: ${result.requests} requests (${Object.entries(result.statuses)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )}, ${result.skipped} not sent by the client), ${result.rawCases} raw cases, ${result.failures.length} failures, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  process.exitCode = result.failures.length > 0 ? 1 : 0;
} finally {
  await env.close();
}
