import { useState, type FormEvent } from 'react';
import { api, asApiError, ok, type ApiError } from '../../lib/api/client';
import type { Body } from '../../lib/api/types';
import { buildOptions, OptionFields, propertiesOf, type Value } from '../../components/option-form';
import { Button } from '../../components/button';
import { ErrorBanner } from '../../components/error-banner';
import { useLoad } from '../../lib/use-load';
import type { Media, Task, TaskConfig } from '../../lib/api/objects';

// "Run a task": the form is generated from GET /tasks-config (each kind's options as JSON Schema,
// exactly what POST /tasks checks) by components/option-form.tsx (shared with the automation
// builder). Required options are marked; the API's validation errors are shown at the field they
// name. No kind has a hand-written form.

type TaskKind = Body<'/tasks', 'post'>['kind'];
const TASK_KINDS = [
  'ingest',
  'video',
  'image',
  'audio',
  'chapters',
  'subtitles',
  'thumbnails',
  'nsfw',
  'speech',
  'description',
  'outline',
  'prompt',
  'workflow',
  'conditions',
  'http',
  'adaptive_video',
] as const satisfies readonly TaskKind[];
const NOT_FROM_A_FILE = new Set(['ingest', 'workflow', 'conditions', 'http']);

function asTaskKind(k: string): TaskKind | undefined {
  return TASK_KINDS.find((x) => x === k);
}

/** The kinds that can run on this media: from a file, and taking its kind. */
export function kindsFor(config: Record<string, TaskConfig>, media: Media): TaskConfig[] {
  return Object.values(config).filter(
    (c) =>
      c.input === 'file' &&
      !NOT_FROM_A_FILE.has(c.kind) &&
      asTaskKind(c.kind) !== undefined &&
      (!c.input_kinds || (media.kind !== undefined && c.input_kinds.some((k) => k === media.kind))),
  );
}

export function RunTask({ media, onStarted }: { media: Media; onStarted: (task: Task) => void }) {
  const config = useLoad(async () => ok(await api.GET('/tasks-config')).data, 'tasks-config');
  const [kind, setKind] = useState('');
  const [fileId, setFileId] = useState('');
  const [values, setValues] = useState<Record<string, Value>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  if (config.error) return <ErrorBanner error={config.error} onRetry={config.reload} />;
  if (!config.data) return <p className="muted">Loading the task kinds…</p>;
  const kinds = kindsFor(config.data, media);
  const chosen = kinds.find((k) => k.kind === kind);
  const inputs = media.files.filter(
    (f) =>
      f.status === 'ready' &&
      // an adaptive streaming package (HLS master playlist) is no input
      !f.type.startsWith('application/vnd.apple.mpegurl') &&
      (chosen?.input_kinds
        ? chosen.input_kinds.some((k) => k === f.kind)
        : ['video', 'image', 'audio'].includes(f.kind)),
  );
  const input = inputs.find((f) => f.id === fileId) ?? inputs.find((f) => f.ref === 'original') ?? inputs[0];
  const properties = propertiesOf(chosen?.options);
  const unavailable = chosen?.engine?.unavailable;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const taskKind = chosen ? asTaskKind(chosen.kind) : undefined;
    if (!taskKind || !input) return;
    const built = buildOptions(properties, values);
    setErrors(built.problems);
    setError(null);
    if (Object.keys(built.problems).length > 0) return;
    setBusy(true);
    try {
      // The options come from the kind's schema in GET /tasks-config, so the body is the chosen
      // kind's (the API checks it); TypeScript cannot tell which member of the union it is.
      const body = { ...built.options, kind: taskKind, file_id: input.id } as Body<'/tasks', 'post'>;
      const task = ok(await api.POST('/tasks', { body })).data;
      setValues({});
      onStarted(task);
    } catch (err) {
      const apiError = asApiError(err);
      const atFields: Record<string, string> = {};
      for (const d of apiError.details) atFields[d.field.replace(/^body\./, '')] = d.message;
      setErrors(atFields);
      setError(apiError);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} className="run-task" aria-label="Run a task">
      <div className="field">
        <label htmlFor="run-kind">Kind</label>
        <select
          id="run-kind"
          value={kind}
          onChange={(e) => {
            setKind(e.target.value);
            setValues({});
            setErrors({});
            setError(null);
          }}
        >
          <option value="">Choose a kind…</option>
          {kinds.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.kind}
              {k.engine?.unavailable ? ' (unavailable here)' : k.engine?.default ? ` (${k.engine.default} engine)` : ''}
            </option>
          ))}
        </select>
      </div>
      {chosen ? (
        <>
          {unavailable ? (
            <div className="banner banner-warn" role="status">
              <p>
                <strong>{chosen.kind} cannot run here:</strong> {unavailable}
              </p>
            </div>
          ) : chosen.engine?.default ? (
            <p className="muted small">Runs with the {chosen.engine.default} engine.</p>
          ) : null}
          {inputs.length > 1 ? (
            <div className="field">
              <label htmlFor="run-input">Input file</label>
              <select id="run-input" value={input?.id ?? ''} onChange={(e) => setFileId(e.target.value)}>
                {inputs.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.ref ?? f.id} — {f.filename}
                  </option>
                ))}
              </select>
            </div>
          ) : null}
          <OptionFields
            properties={properties}
            required={chosen.required}
            values={values}
            setValue={(path, v) => setValues((old) => ({ ...old, [path]: v }))}
            errors={errors}
          />
          {errors.file_id ? <p className="field-error">{errors.file_id}</p> : null}
          <ErrorBanner error={error} />
          <Button type="submit" tone="primary" busy={busy} disabled={Boolean(unavailable) || !input}>
            Run {chosen.kind}
          </Button>
        </>
      ) : null}
    </form>
  );
}
