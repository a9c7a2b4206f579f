// Seeded randomness for the API fuzzer: the same seed gives the same requests, so a failure
// can be replayed. No Math.random anywhere in the fuzzer.

/** A number written into JSON text exactly as given (1e999, -0, 1E+2), not through JSON.stringify. */
export class RawNumber {
  constructor(readonly text: string) {}
}

export type FuzzJson = null | boolean | number | string | RawNumber | FuzzJson[] | { [k: string]: FuzzJson };

/** Mixes a seed and a case number into a new 32-bit seed (splitmix32), so case i has its own stream. */
export function mixSeed(seed: number, n: number): number {
  let z = (seed ^ Math.imul(n + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

const STRINGS = [
  '',
  ' ',
  'a',
  'hello',
  'x'.repeat(300),
  'x'.repeat(5000),
  '0',
  '-1',
  'null',
  'true',
  '[]',
  '{}',
  '..',
  '../../etc/passwd',
  'a/b/c',
  '/leading',
  'trailing/',
  'sp ace',
  'tab\there',
  'new\nline',
  'nul\u0000byte',
  '\u007f',
  'é',
  'café',
  '日本語',
  '🎞️🎬',
  '\u202eevil',
  'a\u0301',
  '\u200b',
  '\ufeffbom',
  '\ud800',
  '\udfff\ud800',
  '%',
  '%00',
  '%ZZ',
  '%2e%2e',
  '?a=b',
  '#frag',
  "'; drop table files; --",
  '<script>',
  '${x}',
  '\\',
  '"',
  'A'.repeat(64),
  'valid-name.png',
  'clip.mp4',
  'Ωmega.JPG',
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  2,
  10,
  100,
  101,
  255,
  256,
  1.5,
  -1.5,
  0.1,
  1e-7,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53 + 2,
  1e20,
  1e308,
  -1e308,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  4096,
  8192,
  100000,
  3600,
  86400,
];
const RAW_NUMBERS = [
  '1e999',
  '-1e999',
  '1E+400',
  '1e-400',
  '-0',
  '0.0',
  '1E2',
  '123456789012345678901234567890',
  `1${'0'.repeat(400)}`,
  '0.' + '0'.repeat(400) + '1',
  '9007199254740993',
];

export interface Random {
  readonly seed: number;
  next(): number;
  int(n: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  string(): string;
  number(): number | RawNumber;
  /** A random JSON value nesting at most `depth` more levels. */
  jsonValue(depth: number): FuzzJson;
  /** An object of `size` random keys (now and then __proto__ or constructor) with values from `value`. */
  object(size: number, value: () => FuzzJson): { [k: string]: FuzzJson };
  /** `levels` of arrays or objects around `inner`. */
  nested(levels: number, inner: FuzzJson): FuzzJson;
}

/** sfc32 seeded from one 32-bit number: small, fast and good enough to pick test inputs. */
export function makeRandom(seed: number): Random {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const randomText = () => {
    const n = int(24);
    let s = '';
    for (let i = 0; i < n; i++) {
      const r = next();
      // Mostly printable ASCII, some Latin-1, some of anything in the BMP and beyond.
      const cp =
        r < 0.7
          ? 0x20 + int(95)
          : r < 0.8
            ? int(0x20)
            : r < 0.9
              ? 0xa0 + int(0x160)
              : r < 0.97
                ? int(0xd800)
                : 0x1f300 + int(0x300);
      s += String.fromCodePoint(cp);
    }
    return s;
  };
  const random: Random = {
    seed,
    next,
    int,
    chance: (p) => next() < p,
    pick,
    string: () => (next() < 0.6 ? pick(STRINGS) : randomText()),
    number: () => {
      const r = next();
      if (r < 0.5) return pick(NUMBERS);
      if (r < 0.7) return new RawNumber(pick(RAW_NUMBERS));
      return r < 0.85 ? int(1000) : (next() - 0.5) * 10 ** int(30);
    },
    jsonValue(depth) {
      const r = next();
      if (depth <= 0 || r < 0.55) {
        const s = next();
        return s < 0.15 ? null : s < 0.3 ? next() < 0.5 : s < 0.6 ? random.number() : random.string();
      }
      if (r < 0.75) return Array.from({ length: int(5) }, () => random.jsonValue(depth - 1));
      return random.object(int(5), () => random.jsonValue(depth - 1));
    },
    object(size, value) {
      // No prototype: a "__proto__" key is then an own property, as JSON.parse makes it.
      const o: { [k: string]: FuzzJson } = Object.create(null);
      for (let i = 0; i < size; i++) {
        const r = next();
        const k =
          r < 0.01
            ? '__proto__'
            : r < 0.02
              ? 'constructor'
              : r < 0.8
                ? pick(['a', 'b', 'name', 'value', 'x-y', '', ' ', 'é', 'prototype'])
                : random.string();
        o[k] = value();
      }
      return o;
    },
    nested(levels, inner) {
      let v = inner;
      for (let i = 0; i < levels; i++) v = next() < 0.5 ? [v] : { [pick(['a', 'k', 'next'])]: v };
      return v;
    },
  };
  return random;
}

class Token {
  constructor(readonly text: string) {}
}

/** JSON text of a fuzz value; RawNumber is written as it is. Iterative, for values of any depth. */
export function toJsonText(root: FuzzJson): string {
  const out: string[] = [];
  const todo: (FuzzJson | Token)[] = [root];
  while (todo.length > 0) {
    const v = todo.pop()!;
    if (v instanceof Token || v instanceof RawNumber) out.push(v.text);
    else if (Array.isArray(v)) {
      todo.push(new Token(']'));
      for (let i = v.length - 1; i >= 0; i--) {
        todo.push(v[i]!);
        if (i > 0) todo.push(new Token(','));
      }
      out.push('[');
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      todo.push(new Token('}'));
      for (let i = entries.length - 1; i >= 0; i--) {
        todo.push(entries[i]![1]);
        todo.push(new Token(`${i > 0 ? ',' : ''}${JSON.stringify(entries[i]![0])}:`));
      }
      out.push('{');
    } else out.push(JSON.stringify(v));
  }
  return out.join('');
}
