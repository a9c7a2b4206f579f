import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn in blocks: one randomBytes() call per id cost more than the rest of an id.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function nextByte(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++]!;
}

/** Uniform random base62 string (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export const ID_PREFIXES = {
  org: 'org_',
  project: 'prj_',
  key: 'key_',
  media: 'med_',
  file: 'file_',
  task: 'task_',
  automation: 'auto_',
  event: 'evt_',
  delivery: 'whd_',
  endpoint: 'we_',
  attempt: 'wha_',
  request: 'req_',
  user: 'usr_',
  session: 'ses_',
  invitation: 'inv_',
  audit: 'aud_',
  // Resumable uploads (issue 25).
  upload: 'upl_',
  upload_token: 'upt_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** `n` as `width` base62 digits: BASE62 is in ASCII order, so these sort as the numbers do. */
function base62Fixed(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function newId(kind: IdKind): string {
  // A request id starts with the time in ms (8 digits: until the year 8900) then 12 random
  // characters (71 bits): ids made later sort later, so the request log's index on them is
  // appended to rather than written at random places (services/operations/recorder.ts).
  if (kind === 'request') return ID_PREFIXES.request + base62Fixed(Date.now(), 8) + randomBase62(12);
  return ID_PREFIXES[kind] + randomBase62(16);
}

export function hasPrefix(id: string, kind: IdKind): boolean {
  return id.startsWith(ID_PREFIXES[kind]) && /^[A-Za-z0-9]{16,40}$/.test(id.slice(ID_PREFIXES[kind].length));
}
