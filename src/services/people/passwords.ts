import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Password hashes: scrypt, since argon2 is not in Node 20's crypto (it comes in 24.7), at OWASP's
// cost for scrypt (N = 2^17, r = 8, p = 1: 128 MiB and a few hundred milliseconds per hash),
// stored as a PHC string so that the cost can be raised later and old hashes still verify. Each
// hash takes 128 MiB, so at most MAX_CONCURRENT run at once; the others wait their turn.

const MAX_CONCURRENT = 2;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
let running = 0;
const waiting: (() => void)[] = [];

async function limited<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** logN;
  // maxmem must cover 128 * N * r bytes (the default 32 MiB would refuse OWASP's cost).
  const options: ScryptOptions = { N, r, p, maxmem: 128 * N * r + 16 * 1024 * 1024 };
  return limited(
    () =>
      new Promise((resolve, reject) =>
        scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))),
      ),
  );
}

/** `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (base64, no padding). */
export async function hashPassword(password: string, logN: number): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, logN, 8, 1);
  return `$scrypt$ln=${logN},r=8,p=1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Whether `password` matches the stored hash (constant-time comparison). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = PHC.exec(stored);
  if (!m) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  const key = await derive(password, Buffer.from(m[4]!, 'base64url'), Number(m[1]), Number(m[2]), Number(m[3]));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash that matches no password, verified when the email is unknown so that both take as long. */
export async function decoyHash(logN: number): Promise<string> {
  return (decoy ??= hashPassword(randomBytes(24).toString('base64'), logN));
}
let decoy: Promise<string> | undefined;

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

/** Rules a new password must meet; the message says what to change. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return null;
}
