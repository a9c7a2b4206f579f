// What a route pays per request for its validator and serialiser being built at first use
// (src/http/validation.ts, src/http/serializers.ts): the lazy wrappers beside the functions Ajv
// and fast-json-stringify build directly, same schema, same value, CPU per call over 5,000,000
// calls, 3 rounds. In-process and allocation-free, so far less noisy than an HTTP benchmark.
// Run: node --import tsx bench/lazy-compilers.ts
import { Ajv } from 'ajv';
import fastJsonStringify from 'fast-json-stringify';
import { Type } from 'typebox';
import { lazySerializerCompiler } from '../src/http/serializers.js';
import { validatorCompiler } from '../src/http/validation.js';
import { fmt, table } from './lib.js';

const N = 5_000_000;
const schema = Type.Object({ id: Type.String() });
const value = { id: 'file_0123456789abcdef' };
const ajv = new Ajv({ allErrors: true, coerceTypes: 'array', useDefaults: true, strict: false, strictNumbers: true });
const cases: [string, (v: typeof value) => unknown][] = [
  ['Ajv function (params)', ajv.compile(schema)],
  ['lazy validator (params)', validatorCompiler({ schema, httpPart: 'params', method: 'GET', url: '/x' })],
  ['fast-json-stringify function', fastJsonStringify(schema)],
  ['lazy serialiser', lazySerializerCompiler({ schema, method: 'GET', url: '/x', httpStatus: '200' })],
];

function nsPerCall(f: (v: typeof value) => unknown): number {
  const before = process.cpuUsage();
  for (let i = 0; i < N; i++) f(value);
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / N;
}

const rounds = cases.map(() => [] as number[]);
for (let r = 0; r < 3; r++) cases.forEach(([, f], i) => rounds[i]!.push(nsPerCall(f)));
console.log(
  table(
    ['case', 'ns per call, each round'],
    cases.map(([name], i) => [name, rounds[i]!.map((x) => fmt(x, 1)).join(' ')]),
  ),
);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
console.log(
  `\nlazy/direct: validator ${fmt(median(rounds[1]!) / median(rounds[0]!), 2)}×, serialiser ${fmt(median(rounds[3]!) / median(rounds[2]!), 2)}× (medians of 3 rounds)`,
);
