import { useState } from 'react';
import type { Media } from '../../lib/api/objects';
import { Button } from '../../components/button';
import { CopyButton } from '../../components/copy-button';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { useBusy } from '../../lib/use-busy';
import { originalOf } from './files';
import { signImageUrl, type ImageUrlOptions } from './image-urls';

// "Copy image URL": an image URL of this media's original at a size, fit and format, signed by
// POST /image-urls, with a preview of what it serves (docs/image-urls.md).

const FITS = ['cover', 'contain', 'inside', 'fill', 'outside'] as const;
const FORMATS = ['auto', 'webp', 'avif', 'jpeg', 'png'] as const;
type Fit = (typeof FITS)[number];
type Format = (typeof FORMATS)[number];

export function ImageUrlBuilder({ media }: { media: Media }) {
  const original = originalOf(media);
  const [width, setWidth] = useState('640');
  const [height, setHeight] = useState('');
  const [fit, setFit] = useState<Fit>('cover');
  const [format, setFormat] = useState<Format>('auto');
  const [url, setUrl] = useState<string | null>(null);
  const { busy, error, submit } = useBusy();
  if (!original || (original.kind !== 'image' && original.kind !== 'video')) return null;
  const options = (): ImageUrlOptions => ({
    ...(width ? { width: Number(width) } : {}),
    ...(height ? { height: Number(height) } : {}),
    fit,
    format,
  });
  return (
    <section className="card section image-url-builder" aria-labelledby="imgurl-h">
      <h2 id="imgurl-h">Image URL</h2>
      <p className="muted small">A signed URL that serves this media at a size and format, made once and cached.</p>
      <form
        className="stack"
        onSubmit={submit(async () => {
          setUrl((await signImageUrl(original.id, options())).src);
        })}
      >
        <div className="row">
          <Field label="Width">
            {(p) => (
              <input {...p} type="number" min={1} max={8192} value={width} onChange={(e) => setWidth(e.target.value)} />
            )}
          </Field>
          <Field label="Height">
            {(p) => (
              <input
                {...p}
                type="number"
                min={1}
                max={8192}
                value={height}
                onChange={(e) => setHeight(e.target.value)}
              />
            )}
          </Field>
        </div>
        <div className="row">
          <Field label="Fit">
            {(p) => (
              <select {...p} value={fit} onChange={(e) => setFit(FITS.find((f) => f === e.target.value) ?? fit)}>
                {FITS.map((f) => (
                  <option key={f}>{f}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Format">
            {(p) => (
              <select
                {...p}
                value={format}
                onChange={(e) => setFormat(FORMATS.find((f) => f === e.target.value) ?? format)}
              >
                {FORMATS.map((f) => (
                  <option key={f}>{f}</option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <ErrorBanner error={error} />
        <div>
          <Button type="submit" busy={busy}>
            Make image URL
          </Button>
        </div>
      </form>
      {url ? (
        <div className="stack">
          <code className="image-url" data-image-url={url}>
            {url}
          </code>
          <CopyButton value={url} label="Copy image URL" />
          <img className="image-url-preview" src={url} alt="Preview of the image URL" />
        </div>
      ) : null}
    </section>
  );
}
