import type { FastifyReply } from 'fastify';
import type { Deps } from '../deps.js';

// S3 with MEDIAD_S3_DELIVERY=redirect: a GET of a file, or of a package entry that is served as
// stored (a segment, an init segment; playlists are rewritten, so they stay with the server), is
// answered with a 302 to a presigned URL, so the bytes (and Range requests) go from the bucket to
// the client directly. HEAD stays local: a presigned GET URL does not allow HEAD (the method is
// part of its signature).

/** RFC 8187 value encoding: encodeURIComponent leaves ' ( ) * which the header grammar does not allow. */
export const rfc8187 = (name: string) =>
  encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function redirectsToStore(deps: Deps): boolean {
  return (
    deps.config.storage.kind === 's3' &&
    deps.config.storage.delivery === 'redirect' &&
    deps.blobs.presignGet !== undefined
  );
}

export async function redirectToStore(
  deps: Deps,
  reply: FastifyReply,
  key: string,
  answer: { contentType: string; contentDisposition?: string },
) {
  if (!deps.blobs.presignGet) throw new Error('this blob store has no presigned URLs');
  const seconds = deps.config.storage.kind === 's3' ? deps.config.storage.presignSeconds : 300;
  const location = await deps.blobs.presignGet(key, { expiresSeconds: seconds, ...answer });
  // The 302 carries a bearer URL for the object: private, and cached for at most half its lifetime,
  // so a cached redirect never points at an expired URL.
  for (const name of ['etag', 'last-modified', 'accept-ranges', 'content-disposition']) reply.removeHeader(name);
  return reply
    .code(302)
    .header('location', location)
    .header('cache-control', `private, max-age=${Math.floor(seconds / 2)}`)
    .send();
}
