import crypto from 'node:crypto';

// Secrets a client writes into an option (an http step's header values) are stored sealed:
// AES-256-GCM under a key that lives outside the database (MEDIAD_SECRET_KEY, or the data dir's
// secret.key), bound to the project they belong to, so a database dump alone reveals nothing and
// a token copied into another project does not open. Only the worker that sends the request
// reveals them; every answer, event, webhook and log shows REDACTED instead.

/** What a sealed value starts with: `sealed:v1:<key id>:<base64url(iv | tag | ciphertext)>`. */
export const SEALED_PREFIX = 'sealed:v1:';
/** What answers show in place of a secret (as the request log shows secret query values). */
export const REDACTED = 'REDACTED';

const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SECRET_KEY_BYTES = 32;

export class SecretKeyError extends Error {
  /** Another attempt on the same process has the same keys. */
  readonly transient = false;

  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

export interface Sealer {
  /** The value sealed for `context` (the project id). */
  seal(value: string, context: string): string;
  /** The value of a sealed token; anything else is returned as it is. Throws SecretKeyError when no key opens it. */
  reveal(value: string, context: string): string;
}

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(SEALED_PREFIX);
}

/** A key's short public name, written into each token so the right key (current or previous) opens it. */
export function keyId(key: Buffer): string {
  return crypto.createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export function generateSecretKey(): Buffer {
  return crypto.randomBytes(SECRET_KEY_BYTES);
}

/** Seals with the first key; reveals with whichever key a token names (the others are earlier keys kept for rotation). */
export function createSealer(keys: readonly Buffer[]): Sealer {
  if (keys.length === 0 || keys.some((k) => k.length !== SECRET_KEY_BYTES))
    throw new Error(`a sealer needs ${SECRET_KEY_BYTES}-byte keys`);
  const byId = new Map(keys.map((k) => [keyId(k), k]));
  const current = keys[0]!;
  const currentId = keyId(current);
  return {
    seal(value, context) {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
      const sealed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
      return `${SEALED_PREFIX}${currentId}:${sealed}`;
    },
    reveal(value, context) {
      if (!isSealed(value)) return value;
      const rest = value.slice(SEALED_PREFIX.length);
      const colon = rest.indexOf(':');
      const id = rest.slice(0, colon);
      const key = byId.get(id);
      if (colon < 0 || !key)
        throw new SecretKeyError(
          `a secret option was sealed with key ${id || '?'}, which this process does not have: set MEDIAD_SECRET_KEY to the same value in every mediad process (and the old key in MEDIAD_SECRET_KEY_PREVIOUS after a rotation)`,
        );
      const raw = Buffer.from(rest.slice(colon + 1), 'base64url');
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretKeyError(`a secret option could not be opened (altered, or sealed for another project)`);
      }
    },
  };
}
