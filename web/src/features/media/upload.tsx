import { useEffect, useId, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, ApiError, asApiError, ok } from '../../lib/api/client';
import { tusUpload, type TusUpload } from './tus-upload';
import { Button } from '../../components/button';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';

// Uploads: each dropped or chosen file is sent with tus (resumable, tus-upload.ts) to /uploads/tus,
// three at a time; each has its own progress bar and Pause/Resume buttons, and a file dropped again
// after a reload or a dropped connection resumes where it stopped. The last answer names the new
// file, whose media the list links to. Add from URL is POST /files {url}.

type UploadState =
  | { status: 'uploading'; loaded: number; total: number }
  | { status: 'paused'; loaded: number; total: number }
  | { status: 'queued' }
  | { status: 'done'; mediaId: string }
  | { status: 'failed'; message: string };

export interface Upload {
  key: string;
  name: string;
  size: number;
  state: UploadState;
}

/** Files sent at once; the others wait their turn. */
export const PARALLEL_UPLOADS = 3;

/** A name that does not collide with a file already in the folder: "clip.mp4" → "clip-k3x9.mp4". */
function withSuffix(name: string): string {
  const dot = name.lastIndexOf('.');
  const suffix = Math.random().toString(36).slice(2, 6);
  return dot > 0 ? `${name.slice(0, dot)}-${suffix}${name.slice(dot)}` : `${name}-${suffix}`;
}

/** What can be said about a file before sending it (a type the browser knows that is not media). */
function precheck(file: File): string | null {
  if (file.size === 0) return 'The file is empty.';
  if (file.type && !/^(image|video|audio)\//.test(file.type))
    return `Unsupported type (${file.type}): upload an image, a video or an audio file.`;
  return null;
}

interface Running {
  handle: TusUpload;
  /** Settles when the file is stored (or failed for good). */
  done: Promise<void>;
}

export function useUploads(onDone: () => void) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const seq = useRef(0);
  const running = useRef(new Map<string, Running>());
  const waiting = useRef<{ key: string; file: File }[]>([]);
  const active = useRef(0);
  const set = (key: string, state: UploadState) =>
    setUploads((u) => u.map((x) => (x.key === key ? { ...x, state } : x)));

  const launch = (key: string, file: File) => {
    active.current++;
    let name = file.name.replace(/[/\\]/g, '_') || 'upload';
    let renames = 0;
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => (finish = resolve));
    const settle = (state: UploadState) => {
      set(key, state);
      running.current.delete(key);
      active.current--;
      finish();
      next();
      onDone();
    };
    const begin = () => {
      const handle = tusUpload(file, name, {
        onProgress: (loaded, total) => set(key, { status: 'uploading', loaded, total }),
        onSuccess: (fileId) => {
          void api.GET('/files/{id}', { params: { path: { id: fileId } } }).then(
            (res) => settle({ status: 'done', mediaId: ok(res).data.media_id }),
            (err: unknown) => settle({ status: 'failed', message: asApiError(err).message }),
          );
        },
        onError: (err) => {
          if (err.code === 'file_conflict' && renames++ < 3) {
            name = withSuffix(file.name.replace(/[/\\]/g, '_') || 'upload');
            begin();
          } else settle({ status: 'failed', message: err.message });
        },
      });
      running.current.set(key, { handle, done });
      void handle.start();
    };
    set(key, { status: 'uploading', loaded: 0, total: file.size });
    begin();
  };

  const next = () => {
    while (active.current < PARALLEL_UPLOADS && waiting.current.length > 0) {
      const item = waiting.current.shift()!;
      launch(item.key, item.file);
    }
  };

  const start = (files: File[]) => {
    const batch = files.map((f) => ({ key: `u${seq.current++}`, file: f }));
    const refused = new Map(batch.map(({ key, file }) => [key, precheck(file)]));
    setUploads((u) => [
      ...batch.map(({ key, file }) => {
        const problem = refused.get(key);
        return {
          key,
          name: file.name,
          size: file.size,
          state: problem ? { status: 'failed' as const, message: problem } : { status: 'queued' as const },
        };
      }),
      ...u,
    ]);
    waiting.current.push(...batch.filter(({ key }) => !refused.get(key)));
    next();
  };
  const pause = (key: string) => {
    const r = running.current.get(key);
    if (!r) return;
    void r.handle.pause();
    setUploads((u) =>
      u.map((x) =>
        x.key === key && x.state.status === 'uploading'
          ? { ...x, state: { status: 'paused', loaded: x.state.loaded, total: x.state.total } }
          : x,
      ),
    );
  };
  const resume = (key: string) => {
    const r = running.current.get(key);
    if (!r) return;
    setUploads((u) =>
      u.map((x) =>
        x.key === key && x.state.status === 'paused'
          ? { ...x, state: { status: 'uploading', loaded: x.state.loaded, total: x.state.total } }
          : x,
      ),
    );
    void r.handle.start();
  };
  const clear = () => setUploads((u) => u.filter((x) => x.state.status !== 'done' && x.state.status !== 'failed'));
  return { uploads, start, clear, pause, resume };
}

/** `focus`: bring the zone into view with its "Choose files" button focused (the palette's "Upload media"). */
export function DropZone({ onFiles, focus = false }: { onFiles: (files: File[]) => void; focus?: boolean }) {
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const zone = useRef<HTMLDivElement>(null);
  const id = useId();
  useEffect(() => {
    if (!focus) return;
    zone.current?.scrollIntoView({ block: 'center' });
    zone.current?.querySelector('button')?.focus();
  }, [focus]);
  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    setOver(false);
    const files = Array.from(e.dataTransfer.files);
    if (files.length > 0) onFiles(files);
  };
  return (
    <div
      ref={zone}
      className={`dropzone ${over ? 'dropzone-over' : ''}`}
      data-testid="dropzone"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
    >
      <p>
        <strong>Drop images, videos or audio here</strong> <span className="muted">or</span>{' '}
        <Button onClick={() => input.current?.click()}>Choose files</Button>
      </p>
      <label htmlFor={id} className="sr-only">
        Files to upload
      </label>
      <input
        id={id}
        ref={input}
        type="file"
        multiple
        accept="image/*,video/*,audio/*"
        className="sr-only"
        tabIndex={-1}
        onChange={(e) => {
          const files = Array.from(e.target.files ?? []);
          e.target.value = '';
          if (files.length > 0) onFiles(files);
        }}
      />
    </div>
  );
}

export function UploadList({
  uploads,
  projectPath,
  onClear,
  onPause,
  onResume,
}: {
  uploads: Upload[];
  projectPath: string;
  onClear: () => void;
  onPause: (key: string) => void;
  onResume: (key: string) => void;
}) {
  if (uploads.length === 0) return null;
  return (
    <section className="uploads" aria-label="Uploads">
      <ul>
        {uploads.map((u) => (
          <li key={u.key} className="upload" data-upload={u.name} data-status={u.state.status}>
            <span className="upload-name">{u.name}</span>
            {u.state.status === 'uploading' || u.state.status === 'paused' ? (
              <>
                <progress
                  max={u.state.total || 1}
                  value={u.state.loaded}
                  aria-label={`${u.state.status === 'paused' ? 'Paused' : 'Uploading'} ${u.name}`}
                />
                {u.state.status === 'uploading' ? (
                  <Button className="btn-small" onClick={() => onPause(u.key)} aria-label={`Pause ${u.name}`}>
                    Pause
                  </Button>
                ) : (
                  <Button className="btn-small" onClick={() => onResume(u.key)} aria-label={`Resume ${u.name}`}>
                    Resume
                  </Button>
                )}
              </>
            ) : u.state.status === 'queued' ? (
              <span className="muted">Waiting…</span>
            ) : u.state.status === 'done' ? (
              <Link className="badge badge-ok" to={`${projectPath}/media/${u.state.mediaId}`}>
                Uploaded — open
              </Link>
            ) : (
              <span className="upload-error" role="alert">
                {u.state.message}
              </span>
            )}
          </li>
        ))}
      </ul>
      {uploads.some((u) => u.state.status === 'done' || u.state.status === 'failed') ? (
        <Button className="btn-small" onClick={onClear}>
          Clear finished
        </Button>
      ) : null}
    </section>
  );
}

export function AddFromUrl({ onAdded }: { onAdded: (mediaId: string) => void }) {
  const [open, setOpen] = useState(false);
  const [url, setUrl] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const file = ok(await api.POST('/files', { body: { url } })).data;
      setOpen(false);
      setUrl('');
      onAdded(file.media_id);
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };
  const fieldError = error ? (error.details.find((d) => d.field === 'url')?.message ?? error.message) : undefined;
  return (
    <>
      <Button onClick={() => setOpen(true)}>Add from URL</Button>
      <FormDialog
        open={open}
        onOpenChange={setOpen}
        title="Add from URL"
        description="mediad fetches the file, stores it and makes a media of it."
      >
        <form onSubmit={submit}>
          <Field label="URL" error={fieldError}>
            {(p) => (
              <input
                {...p}
                type="url"
                required
                value={url}
                onChange={(e) => setUrl(e.target.value)}
                placeholder="https://…"
              />
            )}
          </Field>
          <div className="dialog-actions">
            <Button onClick={() => setOpen(false)}>Cancel</Button>
            <Button type="submit" tone="primary" busy={busy}>
              Add
            </Button>
          </div>
        </form>
      </FormDialog>
    </>
  );
}
