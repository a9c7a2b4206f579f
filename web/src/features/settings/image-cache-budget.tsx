import { useState } from 'react';
import { api, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { formatBytes } from '../../lib/format';
import { useBusy } from '../../lib/use-busy';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';

// The project's share of the image-URL cache (docs/image-urls.md): what its results take now,
// its budget (its own or the server's default), and, for owners, setting it in MiB.

type Settings = Data<'/project/image-url-settings', 'get'>;
const MIB = 1024 * 1024;

export function ImageCacheBudget({
  settings,
  canManage,
  onSaved,
}: {
  settings: Settings;
  canManage: boolean;
  onSaved: () => void;
}) {
  const { cache } = settings;
  const [mib, setMib] = useState(settings.cache_bytes === null ? '' : String(+(settings.cache_bytes / MIB).toFixed(3)));
  const { busy, error, submit } = useBusy();
  const toast = useToast();
  return (
    <div className="stack">
      <h3>Cache</h3>
      <p className="small" data-image-cache-usage={cache.used_bytes}>
        {cache.results} cached {cache.results === 1 ? 'result takes' : 'results take'} {formatBytes(cache.used_bytes)}{' '}
        of this project’s {formatBytes(cache.budget_bytes)}
        {settings.cache_bytes === null ? ' (the server’s default)' : ''}; past it the least recently served go first.
      </p>
      {canManage ? (
        <form
          className="row"
          aria-label="Image cache budget"
          onSubmit={submit(async () => {
            const cacheBytes = mib.trim() === '' ? null : Math.round(Number(mib) * MIB);
            ok(await api.PATCH('/project/image-url-settings', { body: { cache_bytes: cacheBytes } }));
            toast({ title: 'Image cache budget saved', tone: 'success' });
            onSaved();
          })}
        >
          <Field
            label="Cache budget (MiB)"
            hint={`Empty: the server’s default (${formatBytes(cache.default_bytes)}); at most ${formatBytes(cache.max_bytes)}, the whole cache.`}
          >
            {(p) => (
              <input
                {...p}
                type="number"
                min={0}
                max={cache.max_bytes / MIB}
                step="any"
                value={mib}
                onChange={(e) => setMib(e.target.value)}
              />
            )}
          </Field>
          <Button type="submit" busy={busy}>
            Save budget
          </Button>
        </form>
      ) : null}
      <ErrorBanner error={error} />
    </div>
  );
}
