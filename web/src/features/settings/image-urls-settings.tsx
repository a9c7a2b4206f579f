import { useState } from 'react';
import { api, ok } from '../../lib/api/client';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { Secret } from '../../components/secret';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { useBusy } from '../../lib/use-busy';
import { ImageCacheBudget } from './image-cache-budget';

// Image URLs (docs/image-urls.md): the key that signs them (revealed on request, rotated with a
// 24-hour overlap), whether unsigned preset URLs are served, the cache's budget, and the presets.

export function ImageUrlSettings({ projectId, canManage }: { projectId: string | undefined; canManage: boolean }) {
  const key = useLoad(async () => ok(await api.GET('/project/image-url-key')).data, `imk:${projectId}`);
  const settings = useLoad(async () => ok(await api.GET('/project/image-url-settings')).data, `imgset:${projectId}`);
  const presets = useLoad(async () => ok(await api.GET('/image-presets')).data, `presets:${projectId}`);
  const [shown, setShown] = useState<string | null>(null);
  const { busy, error, submit } = useBusy();
  const toast = useToast();
  return (
    <section className="card stack" aria-labelledby="imgurl-h">
      <h2 id="imgurl-h">Image URLs</h2>
      <p className="muted">
        <code>/img/…</code> URLs serve a file at a size and format, signed with this key (HMAC-SHA256).
      </p>
      <ErrorBanner error={key.error ?? settings.error ?? presets.error} />
      {key.loading ? <Skeleton lines={1} /> : null}
      {key.data ? (
        <p className="small" data-image-url-key={key.data.prefix}>
          Key <code>{key.data.prefix}</code> · made <Time iso={key.data.created} />
          {key.data.previous_key_expires ? (
            <>
              {' '}
              · the previous key works until <Time iso={key.data.previous_key_expires} />
            </>
          ) : null}
        </p>
      ) : null}
      {shown ? <Secret value={shown} label="Image URL key" /> : null}
      {canManage ? (
        <div className="row">
          <Button
            busy={busy}
            onClick={submit(async () => {
              setShown(ok(await api.POST('/project/image-url-key/reveal')).data.key ?? null);
            })}
          >
            Reveal key
          </Button>
          <ConfirmDialog
            trigger={<Button tone="danger">Rotate key</Button>}
            title="Rotate the image URL key?"
            description="A new key signs image URLs; URLs signed with the current key keep working for 24 hours."
            confirmLabel="Rotate"
            onConfirm={async () => {
              setShown(ok(await api.POST('/project/image-url-key/rotate')).data.key ?? null);
              key.reload();
              toast({ title: 'Image URL key rotated', tone: 'success' });
            }}
          />
        </div>
      ) : null}
      {settings.data ? (
        <label className="check">
          <input
            type="checkbox"
            checked={settings.data.allow_unsigned_presets}
            disabled={!canManage}
            onChange={submit(async () => {
              ok(
                await api.PATCH('/project/image-url-settings', {
                  body: { allow_unsigned_presets: !settings.data!.allow_unsigned_presets },
                }),
              );
              settings.reload();
            })}
          />
          Serve unsigned URLs of presets (<code>/img/…/_/preset:name/…</code>)
        </label>
      ) : null}
      {settings.data ? (
        <ImageCacheBudget
          key={String(settings.data.cache_bytes)}
          settings={settings.data}
          canManage={canManage}
          onSaved={settings.reload}
        />
      ) : null}
      <h3>Presets</h3>
      {presets.data && presets.data.length === 0 ? <p className="muted small">No presets yet.</p> : null}
      <ul className="stack" aria-label="Image presets">
        {(presets.data ?? []).map((p) => (
          <li key={p.name} className="row" data-preset={p.name}>
            <code>{p.name}</code> <code className="muted small">{p.path}</code>
            {canManage ? (
              <Button
                tone="danger"
                onClick={submit(async () => {
                  ok(await api.DELETE('/image-presets/{name}', { params: { path: { name: p.name } } }));
                  presets.reload();
                })}
              >
                Delete
              </Button>
            ) : null}
          </li>
        ))}
      </ul>
      {canManage ? <PresetForm onSaved={presets.reload} /> : null}
      <ErrorBanner error={error} />
    </section>
  );
}

/** A new preset from its name and its options as a URL writes them (width:320,height:180,fit:cover). */
function PresetForm({ onSaved }: { onSaved: () => void }) {
  const [name, setName] = useState('');
  const [options, setOptions] = useState('width:320,height:180,fit:cover,format:auto');
  const { busy, error, submit } = useBusy();
  return (
    <form
      className="stack"
      aria-label="New image preset"
      onSubmit={submit(async () => {
        const parsed: Record<string, string> = {};
        for (const part of options.split(',').filter(Boolean)) {
          const [k, ...v] = part.split(':');
          if (k) parsed[k.trim()] = v.join(':').trim();
        }
        ok(await api.POST('/image-presets', { body: { name, options: parsed } }));
        setName('');
        onSaved();
      })}
    >
      <div className="row">
        <Field label="Preset name">
          {(p) => (
            <input
              {...p}
              value={name}
              required
              pattern="[a-z0-9][a-z0-9_\-]*"
              onChange={(e) => setName(e.target.value)}
            />
          )}
        </Field>
        <Field label="Options" hint="As in a URL: width:320,height:180,fit:cover,format:auto">
          {(p) => <input {...p} value={options} required onChange={(e) => setOptions(e.target.value)} />}
        </Field>
      </div>
      <ErrorBanner error={error} />
      <div>
        <Button type="submit" busy={busy}>
          Add preset
        </Button>
      </div>
    </form>
  );
}
