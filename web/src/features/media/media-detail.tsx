import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, asApiError, ok, type ApiError } from '../../lib/api/client';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { formatBytes } from '../../lib/format';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { useToast } from '../../components/toast';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { titleOf } from './card';
import { originalOf, playableSources } from './files';
import { Intelligence } from './intelligence';
import { Player } from './player';
import { ImageUrlBuilder } from './image-url-builder';
import { RunTask } from './task-form';
import { FilesTable } from './files-table';
import type { Media, Task } from '../../lib/api/objects';
import './media.css';

// One media: the player (video/audio) or the image viewer with a compare slider, its files with
// copy/download/signed URL, intelligence results, the metadata editor, its tasks as a timeline,
// "run a task" with a generated form, and delete. Viewers see no write controls.

export default function MediaDetailPage() {
  const { projectId = '', id = '' } = useParams();
  const session = useSignedIn();
  const { canWrite } = permissionsFor(membershipOf(session, projectId)?.role);
  const navigate = useNavigate();
  const toast = useToast();
  const media = useLoad(
    async () => ok(await api.GET('/media/{id}', { params: { path: { id } } })).data,
    `${projectId}/${id}`,
  );
  const tasks = useLoad(
    async () => ok(await api.GET('/tasks', { params: { query: { media_id: id, page: 1, limit: 100 } } })).data,
    `${projectId}/${id}/tasks`,
    3000,
  );
  const player = useRef<HTMLVideoElement | HTMLAudioElement | null>(null);
  // A task that finished since the last look may have added files: reload the media then.
  const finished = (tasks.data ?? []).filter((t) => t.status === 'completed').length;
  const seen = useRef(finished);
  const reloadMedia = media.reload;
  useEffect(() => {
    if (finished === seen.current) return;
    seen.current = finished;
    reloadMedia();
  }, [finished, reloadMedia]);

  if (media.error)
    return (
      <div className="page">
        <ErrorBanner error={media.error} onRetry={media.reload} />
      </div>
    );
  if (!media.data)
    return (
      <div className="page">
        <Skeleton lines={6} label="Loading the media" />
      </div>
    );
  const m = media.data;
  const libraryPath = `/p/${projectId}/media`;
  const playable = (m.kind === 'video' || m.kind === 'audio') && playableSources(m).length > 0;
  const seek = (t: number) => {
    const el = player.current;
    if (!el) return;
    el.currentTime = t;
    void el.play().catch(() => undefined);
  };

  return (
    <div className="page">
      <p className="small">
        <Link to={libraryPath}>← Media</Link>
      </p>
      <PageHeader
        title={titleOf(m)}
        description={
          <>
            <code>{m.id}</code> · {m.kind ?? 'no files yet'} · created <Time iso={m.created} />
          </>
        }
        actions={
          <>
            <CopyAsCurl path={`/media/${m.id}`} />
            {canWrite ? (
              <ConfirmDialog
                trigger={<Button tone="danger">Delete</Button>}
                title="Delete this media?"
                description={`${titleOf(m)} and its ${m.files.length} file(s) are deleted for good.`}
                confirmLabel="Delete media"
                onConfirm={async () => {
                  await api.DELETE('/media/{id}', { params: { path: { id: m.id } } });
                  toast({ title: 'Media deleted', tone: 'success' });
                  navigate(libraryPath);
                }}
              />
            ) : null}
          </>
        }
      />
      <div className="detail-grid">
        <div>
          {m.kind === 'image' ? <ImageViewer media={m} /> : <Player media={m} mediaRef={player} />}
          <Intelligence media={m} onSeek={seek} playable={playable} />
          <section className="section" aria-labelledby="files-h">
            <h2 id="files-h">Files</h2>
            <FilesTable media={m} tasks={tasks.data ?? []} canWrite={canWrite} />
          </section>
        </div>
        <div>
          <section className="card" aria-labelledby="details-h">
            <h2 id="details-h">Details</h2>
            {canWrite ? <MetadataEditor media={m} onSaved={media.reload} /> : <ReadOnlyDetails media={m} />}
          </section>
          {/* An image URL reads a file: viewers may make one too (POST /image-urls needs files:read). */}
          <ImageUrlBuilder media={m} />
          {canWrite ? (
            <section className="card section" aria-labelledby="run-h">
              <h2 id="run-h">Run a task</h2>
              <RunTask
                media={m}
                onStarted={(t) => {
                  toast({ title: `Task ${t.kind} started`, description: t.id, tone: 'success' });
                  tasks.reload();
                }}
              />
            </section>
          ) : null}
          <section className="card section" aria-labelledby="tasks-h">
            <h2 id="tasks-h">Tasks</h2>
            <ErrorBanner error={tasks.error} />
            {tasks.data ? <TaskTimeline tasks={tasks.data} /> : <Skeleton lines={2} label="Loading tasks" />}
          </section>
        </div>
      </div>
    </div>
  );
}

function ReadOnlyDetails({ media }: { media: Media }) {
  return (
    <dl className="kv">
      <dt>Title</dt>
      <dd>{media.title ?? '—'}</dd>
      <dt>Alt text</dt>
      <dd>{media.alt ?? '—'}</dd>
      <dt>Metadata</dt>
      <dd>
        <pre>{JSON.stringify(media.metadata, null, 2)}</pre>
      </dd>
    </dl>
  );
}

/** The original beside a derived image, one over the other, cut at the slider's position. */
function ImageViewer({ media }: { media: Media }) {
  const original = originalOf(media);
  const derived = media.files.filter((f) => f.kind === 'image' && f.status === 'ready' && f.id !== original?.id);
  const [otherId, setOtherId] = useState('');
  const [pos, setPos] = useState(50);
  if (!original) return <p className="muted">This media has no files yet.</p>;
  const other = derived.find((f) => f.id === otherId) ?? derived[0];
  return (
    <figure className="image-viewer" style={{ margin: 0 }}>
      <div className="compare" data-compare={other ? other.id : undefined}>
        <img src={original.url} alt={media.alt ?? `Original: ${original.filename}`} />
        {other ? (
          <div className="compare-top" style={{ clipPath: `inset(0 0 0 ${pos}%)` }}>
            <img src={other.url} alt={`Derived (${other.ref ?? other.id})`} />
          </div>
        ) : null}
        {other ? <div className="compare-line" style={{ left: `${pos}%` }} aria-hidden="true" /> : null}
      </div>
      <figcaption className="compare-controls">
        {other ? (
          <>
            <span className="muted small">Left: original · right: {other.ref ?? other.id}</span>
            <label htmlFor="compare-pos" className="sr-only">
              Compare position
            </label>
            <input
              id="compare-pos"
              type="range"
              min={0}
              max={100}
              value={pos}
              onChange={(e) => setPos(Number(e.target.value))}
            />
            {derived.length > 1 ? (
              <>
                <label htmlFor="compare-with">Compare with</label>
                <select id="compare-with" value={other.id} onChange={(e) => setOtherId(e.target.value)}>
                  {derived.map((f) => (
                    <option key={f.id} value={f.id}>
                      {f.ref ?? f.id} ({f.width}×{f.height}, {formatBytes(f.filesize)})
                    </option>
                  ))}
                </select>
              </>
            ) : null}
          </>
        ) : (
          <span className="muted small">Run an image task to compare the original with a derived image.</span>
        )}
      </figcaption>
    </figure>
  );
}

function MetadataEditor({ media, onSaved }: { media: Media; onSaved: () => void }) {
  const [title, setTitle] = useState(media.title ?? '');
  const [alt, setAlt] = useState(media.alt ?? '');
  const [metadata, setMetadata] = useState(JSON.stringify(media.metadata, null, 2));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(metadata || '{}');
    } catch {
      setErrors({ metadata: 'is not valid JSON' });
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      setErrors({ metadata: 'must be a JSON object' });
      return;
    }
    const meta: Record<string, unknown> = { ...parsed };
    setErrors({});
    setBusy(true);
    try {
      await api.PATCH('/media/{id}', {
        params: { path: { id: media.id } },
        body: { title: title.trim() ? title : null, alt: alt.trim() ? alt : null, metadata: meta },
      });
      toast({ title: 'Saved', tone: 'success' });
      onSaved();
    } catch (err) {
      const apiError = asApiError(err);
      const at: Record<string, string> = {};
      for (const d of apiError.details) at[d.field.replace(/^body\./, '').split(/[.[]/)[0]!] = d.message;
      setErrors(at);
      setError(apiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} aria-label="Edit details">
      <Field label="Title" error={errors.title}>
        {(p) => <input {...p} value={title} onChange={(e) => setTitle(e.target.value)} />}
      </Field>
      <Field label="Alt text" hint="Describes an image for people who cannot see it." error={errors.alt}>
        {(p) => <textarea {...p} rows={2} value={alt} onChange={(e) => setAlt(e.target.value)} />}
      </Field>
      <Field
        label="Metadata"
        hint="A JSON object; keys written by tasks (nsfw, speech, …) are replaced by later tasks."
        error={errors.metadata}
      >
        {(p) => (
          <textarea {...p} rows={5} spellCheck={false} value={metadata} onChange={(e) => setMetadata(e.target.value)} />
        )}
      </Field>
      <ErrorBanner error={error} />
      <Button type="submit" tone="primary" busy={busy}>
        Save
      </Button>
    </form>
  );
}

function seconds(a: string | undefined, b: string | undefined): number | undefined {
  if (!a || !b) return undefined;
  return Math.max(0, (Date.parse(b) - Date.parse(a)) / 1000);
}

function TaskTimeline({ tasks }: { tasks: Task[] }) {
  if (tasks.length === 0) return <p className="muted">No tasks have run on this media.</p>;
  const sorted = [...tasks].sort((a, b) => a.created.localeCompare(b.created));
  const longest = Math.max(1, ...sorted.map((t) => seconds(t.started, t.finished) ?? 0));
  return (
    <ol className="timeline" aria-label="Tasks of this media">
      {sorted.map((t) => {
        const ran = seconds(t.started, t.finished);
        const waited = seconds(t.created, t.started);
        return (
          <li key={t.id} data-task={t.id} data-status={t.status}>
            <div className="row">
              <strong>{t.kind}</strong>
              <span
                className={`badge ${t.status === 'completed' ? 'badge-ok' : t.status === 'failed' ? 'badge-danger' : 'badge-warn'}`}
              >
                {t.status}
                {t.status === 'processing' ? ` ${t.progress}%` : ''}
              </span>
            </div>
            <div className="muted small">
              queued <Time iso={t.created} />
              {waited !== undefined ? ` · waited ${waited.toFixed(1)} s` : ''}
              {ran !== undefined ? ` · ran ${ran.toFixed(1)} s` : ''} · attempts {t.attempts}
            </div>
            {ran !== undefined ? (
              <div
                className="timeline-bar"
                style={{ width: `${Math.max(2, (ran / longest) * 100)}%` }}
                aria-hidden="true"
              />
            ) : null}
            {t.status === 'processing' ? (
              <progress max={100} value={t.progress} aria-label={`${t.kind} progress`} />
            ) : null}
            {t.error ? (
              <p className="field-error">
                {t.error} {t.error_code ? <code>({t.error_code})</code> : null}
              </p>
            ) : null}
            <code className="small muted">{t.id}</code>
          </li>
        );
      })}
    </ol>
  );
}
