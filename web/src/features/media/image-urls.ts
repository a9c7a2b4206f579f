import { useEffect, useState } from 'react';
import { api, ok } from '../../lib/api/client';
import type { Body } from '../../lib/api/types';

// Image URLs for the web app's pictures (docs/image-urls.md): signed by the server through
// POST /image-urls — the app holds no key — and remembered per file and options for the page's life.

export type ImageUrlOptions = NonNullable<Body<'/image-urls', 'post'>['options']>;

export interface SignedImage {
  src: string;
  srcSet: string | undefined;
}

const signed = new Map<string, Promise<SignedImage>>();

export function signImageUrl(fileId: string, options: ImageUrlOptions, widths?: number[]): Promise<SignedImage> {
  const id = JSON.stringify([fileId, options, widths]);
  let p = signed.get(id);
  if (!p) {
    p = api.POST('/image-urls', { body: { file_id: fileId, options, ...(widths ? { widths } : {}) } }).then((res) => {
      const d = ok(res).data;
      return { src: d.url, srcSet: d.srcset };
    });
    p.catch(() => signed.delete(id));
    signed.set(id, p);
  }
  return p;
}

/**
 * A picture of `fileId` at the size it is shown, 1× and 2× (`srcset`), or `fallback` (the file's
 * own URL) when the URL cannot be signed (a viewer's role may not sign). undefined while signing.
 */
export function useImageUrl(
  fileId: string | undefined,
  width: number,
  height: number,
  extra: ImageUrlOptions = {},
  fallback?: string,
): SignedImage | null | undefined {
  const [state, setState] = useState<{ id: string; image: SignedImage | null } | null>(null);
  const id = fileId ? JSON.stringify([fileId, width, height, extra]) : '';
  useEffect(() => {
    if (!fileId) return;
    let live = true;
    const options: ImageUrlOptions = { width, height, fit: 'cover', format: 'auto', ...extra };
    // One request signs the 1× URL and the 2× one (twice the pixels, for sharp screens).
    signImageUrl(fileId, options, [width, width * 2]).then(
      (signed) => {
        const [, two] = (signed.srcSet ?? '').split(', ').map((entry) => entry.split(' ')[0]);
        if (live) setState({ id, image: { src: signed.src, srcSet: two ? `${signed.src} 1x, ${two} 2x` : undefined } });
      },
      () => {
        if (live) setState({ id, image: fallback ? { src: fallback, srcSet: undefined } : null });
      },
    );
    return () => {
      live = false;
    };
    // extra is compared through id (its JSON).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id, fallback]);
  if (!fileId) return null;
  return state?.id === id ? state.image : undefined;
}
