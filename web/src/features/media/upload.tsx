import { useEffect, useId, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, ApiError, asApiError, ok } from '../../lib/api/client';
import { Button } from '../../components/button';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { isRecord } from '../../lib/guards';

// Uploads: each dropped or chosen file gets a signed PUT URL (POST /signatures, method put) and is
// sent with XMLHttpRequest, whose upload progress drives its own bar; the answer is the new file
// (and media). Add from URL is POST /files {url}.

type UploadState =
  | { status: 'uploading'; loaded: number; total: number }
  | { status: 'done'; mediaId: string }
  | { status: 'failed'; message: string };

export interface Upload {
  key: string;
  name: string;
  size: number;
  state: UploadState;
}

const FOLDER = 'uploads';

/** The error of a PUT answer (the envelope's or the bare generation's). */
function errorOf(status: number, text: string): ApiError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const err = isRecord(body) ? (isRecord(body.error) ? body.error : body) : {};
  return new ApiError({
    code: typeof err.code === 'string' ? err.code : `http_${status}`,
    message: typeof err.message === 'string' ? err.message : `The upload failed (${status})`,
    status,
  });
}

function mediaIdOf(text: string): string | null {
  try {
    const body: unknown = JSON.parse(text);
    const file = isRecord(body) && isRecord(body.data) ? body.data : body;
    return isRecord(file) && typeof file.media_id === 'string' ? file.media_id : null;
  } catch {
    return null;
  }
}

function put(url: string, file: File, onProgress: (loaded: number, total: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      if (xhr.status === 201) {
        const id = mediaIdOf(xhr.responseText);
        if (id) resolve(id);
        else
          reject(new ApiError({ code: 'bad_answer', message: 'The server did not name the new media.', status: 201 }));
      } else reject(errorOf(xhr.status, xhr.responseText));
    };
    xhr.onerror = () =>
      reject(new ApiError({ code: 'network_error', message: 'The upload was cut off (network error).', status: 0 }));
    xhr.send(file);
  });
}

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

async function uploadOne(file: File, onProgress: (loaded: number, total: number) => void): Promise<string> {
  const problem = precheck(file);
  if (problem) throw new ApiError({ code: 'unsupported_media_type', message: problem, status: 0 });
  let name = file.name.replace(/[/\\]/g, '_') || 'upload';
  for (let attempt = 0; ; attempt++) {
    const sig = ok(await api.POST('/signatures', { body: { filename: name, folder: FOLDER, method: 'put' } })).data;
    try {
      return await put(sig.url, file, onProgress);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'file_conflict' && attempt < 3) {
        name = withSuffix(file.name.replace(/[/\\]/g, '_') || 'upload');
        continue;
      }
      throw err;
    }
  }
}

export function useUploads(onDone: () => void) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const seq = useRef(0);
  const start = (files: File[]) => {
    const batch = files.map((f) => ({ key: `u${seq.current++}`, file: f }));
    setUploads((u) => [
      ...batch.map(({ key, file }) => ({
        key,
        name: file.name,
        size: file.size,
        state: { status: 'uploading' as const, loaded: 0, total: file.size },
      })),
      ...u,
    ]);
    const set = (key: string, state: UploadState) =>
      setUploads((u) => u.map((x) => (x.key === key ? { ...x, state } : x)));
    void Promise.all(
      batch.map(({ key, file }) =>
        uploadOne(file, (loaded, total) => set(key, { status: 'uploading', loaded, total })).then(
          (mediaId) => set(key, { status: 'done', mediaId }),
          (err: unknown) => set(key, { status: 'failed', message: asApiError(err).message }),
        ),
      ),
    ).then(onDone);
  };
  const clear = () => setUploads((u) => u.filter((x) => x.state.status === 'uploading'));
  return { uploads, start, clear };
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
}: {
  uploads: Upload[];
  projectPath: string;
  onClear: () => void;
}) {
  if (uploads.length === 0) return null;
  return (
    <section className="uploads" aria-label="Uploads">
      <ul>
        {uploads.map((u) => (
          <li key={u.key} className="upload" data-upload={u.name} data-status={u.state.status}>
            <span className="upload-name">{u.name}</span>
            {u.state.status === 'uploading' ? (
              <progress max={u.state.total || 1} value={u.state.loaded} aria-label={`Uploading ${u.name}`} />
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
      {uploads.some((u) => u.state.status !== 'uploading') ? (
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
