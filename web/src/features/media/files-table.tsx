import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { Button } from '../../components/button';
import { CopyButton } from '../../components/copy-button';
import { DataTable } from '../../components/data-table';
import { ErrorBanner } from '../../components/error-banner';
import { formatBytes } from '../../lib/format';
import { Time } from '../../components/time';
import { formatDuration } from './files';
import type { Media, MediaFile, Signature, Task } from '../../lib/api/objects';

// The files of a media on its detail page: four columns that fit the page's main column at any
// width from 1280 px up (the actions stacked, not pushed out of sight), and for a derived file
// without a ref the task kind and options that made it, linking to that task.

/** The codecs of a type such as `video/mp4;codecs=avc1,mp4a`, else the format. */
export function codecOf(f: MediaFile): string | null {
  const m = /codecs="?([^";]+)"?/.exec(f.type);
  return m?.[1] ?? f.format ?? null;
}

/** An option's value in a line: strings bare, the rest as JSON, long ones cut. */
function optionText(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** `image · width 640, format webp`: what a task made, from its kind and options. */
export function madeBy(task: Pick<Task, 'kind' | 'options'>): string {
  const options = Object.entries(task.options ?? {})
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k} ${optionText(v)}`);
  return options.length ? `${task.kind} · ${options.join(', ')}` : task.kind;
}

/** The task whose output is `file` (its first output; a storyboard's sprite has its own ref). */
function producerOf(file: MediaFile, tasks: Task[]): Task | undefined {
  return tasks.find((t) => {
    const output = t.output as { id?: unknown } | null;
    return output?.id === file.id;
  });
}

function FileLabel({ file, tasks }: { file: MediaFile; tasks: Task[] }) {
  const { projectId } = useParams();
  const task = file.ref ? undefined : producerOf(file, tasks);
  return (
    <>
      {file.ref ? (
        <strong>{file.ref}</strong>
      ) : task ? (
        <Link to={`/p/${projectId}/tasks?task=${task.id}`} title="The task that made this file">
          {madeBy(task)}
        </Link>
      ) : (
        <span className="muted">no ref</span>
      )}
      <br />
      <code className="small muted wrap">{file.filename}</code>
    </>
  );
}

function SignedUrl({ file }: { file: MediaFile }) {
  const [sig, setSig] = useState<Signature | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const make = async () => {
    setBusy(true);
    setError(null);
    try {
      setSig(
        ok(await api.POST('/signatures', { body: { filename: file.filename, folder: file.folder, method: 'get' } }))
          .data,
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button className="btn-small" busy={busy} onClick={make} aria-label={`Make a signed URL for ${file.filename}`}>
        Signed URL
      </Button>
      <ErrorBanner error={error} />
      {sig ? (
        <div className="signed" data-signed-url>
          <code className="small wrap">{sig.url}</code> <CopyButton value={sig.url} label="Copy signed URL" />
          <span className="muted small">
            {' '}
            expires <Time iso={new Date(sig.expiry * 1000).toISOString()} />
          </span>
        </div>
      ) : null}
    </>
  );
}

export function FilesTable({ media, tasks, canWrite }: { media: Media; tasks: Task[]; canWrite: boolean }) {
  return (
    <div className="files-table">
      <DataTable<MediaFile>
        caption="Files of this media"
        rows={media.files}
        rowKey={(f) => f.id}
        empty={<p className="muted">No files.</p>}
        columns={[
          { key: 'file', header: 'File', cell: (f) => <FileLabel file={f} tasks={tasks} /> },
          {
            key: 'type',
            header: 'Type',
            cell: (f) => (
              <>
                {f.kind} <code className="small">{f.type.split(';')[0]}</code>
                {codecOf(f) ? (
                  <>
                    <br />
                    <span className="small muted">{codecOf(f)}</span>
                  </>
                ) : null}
              </>
            ),
          },
          {
            key: 'facts',
            header: 'Size',
            className: 'nowrap',
            cell: (f) => (
              <>
                {formatBytes(f.filesize)}
                {f.width && f.height ? (
                  <>
                    <br />
                    <span className="small muted">
                      {f.width}×{f.height}
                    </span>
                  </>
                ) : null}
                {f.duration !== undefined ? (
                  <>
                    <br />
                    <span className="small muted">{formatDuration(f.duration)}</span>
                  </>
                ) : null}
              </>
            ),
          },
          {
            key: 'actions',
            header: <span className="sr-only">Actions</span>,
            className: 'file-actions',
            cell: (f) => (
              <div className="file-actions-stack">
                <CopyButton value={f.url} label="Copy URL" />
                <a className="btn btn-small" href={f.url} download={f.filename}>
                  Download
                </a>
                {canWrite ? <SignedUrl file={f} /> : null}
              </div>
            ),
          },
        ]}
      />
    </div>
  );
}
