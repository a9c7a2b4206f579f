import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { deliveryUrl } from '../../shapes/files.js';

// reference.md Decisions 9: HMAC-SHA256 with the project's signing secret over
// "<folder/filename>?expiry=<unix>&method=<get|put>", base64url without padding.

export type SignedMethod = 'get' | 'put';

export function stringToSign(folder: string, filename: string, expiry: number, method: SignedMethod): string {
  return `${folder ? `${folder}/` : ''}${filename}?expiry=${expiry}&method=${method}`;
}

export function sign(secret: string, folder: string, filename: string, expiry: number, method: SignedMethod): string {
  return createHmac('sha256', secret)
    .update(stringToSign(folder, filename, expiry, method))
    .digest('base64url');
}

export interface SignedUrl {
  domain: string;
  folder: string;
  filename: string;
  expiry: number;
  method: SignedMethod;
  signature: string;
  url: string;
}

export function signedUrl(
  deps: Pick<Deps, 'config'>,
  projectId: string,
  secret: string,
  folder: string,
  filename: string,
  expiry: number,
  method: SignedMethod,
): SignedUrl {
  const signature = sign(secret, folder, filename, expiry, method);
  const url = `${deliveryUrl(deps.config.publicUrl, projectId, folder, filename)}?expiry=${expiry}&method=${method}&signature=${signature}`;
  return { domain: new URL(deps.config.publicUrl).host, folder, filename, expiry, method, signature, url };
}

/** Checks a signed request; throws signature_expired or signature_invalid (both 403). */
export function verifySignature(
  secret: string,
  folder: string,
  filename: string,
  query: { expiry?: string; method?: string; signature?: string },
  method: SignedMethod,
  nowSeconds: number,
): void {
  const expiry = Number(query.expiry);
  if (!query.signature || !Number.isSafeInteger(expiry) || query.method !== method) {
    throw new AppError(
      'signature_invalid',
      `the signed URL is not valid for ${method.toUpperCase()}: it needs expiry, method=${method} and signature from POST /signatures`,
    );
  }
  const expected = Buffer.from(sign(secret, folder, filename, expiry, method));
  const given = Buffer.from(query.signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw new AppError(
      'signature_invalid',
      'the URL signature does not match; create a new signed URL with POST /signatures',
    );
  }
  if (expiry < nowSeconds)
    throw new AppError(
      'signature_expired',
      `the signed URL expired at ${new Date(expiry * 1000).toISOString()}; create a new one with POST /signatures`,
    );
}
