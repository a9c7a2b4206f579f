import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { Button } from '../../components/button';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { useLoad } from '../../lib/use-load';
import { formatValue } from './automations-model';
import { TableScroll } from '../../components/table-scroll';

// Dry run (POST /automations/{id}/dry-run {media_id}): what a run on a chosen media would do,
// nothing created. The trigger and each step by its path, whether it runs (yes / no / unknown) and
// why, each condition with the value compared (`actual`) and passed / failed / unknown, the branch.

export type DryRun = Data<'/automations/{id}/dry-run', 'post'>;
type DryCondition = DryRun['trigger']['conditions'][number];

function Verdict({ passed }: { passed: boolean | null }) {
  if (passed === true) return <span className="badge badge-ok">passed</span>;
  if (passed === false) return <span className="badge badge-danger">failed</span>;
  return <span className="badge badge-warn">unknown</span>;
}

function ConditionsTable({ conditions, caption }: { conditions: DryCondition[]; caption: string }) {
  if (conditions.length === 0) return <p className="small muted">No conditions.</p>;
  return (
    <TableScroll>
      <table className="data-table dry-conditions">
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Property</th>
            <th scope="col">Operator</th>
            <th scope="col">Value</th>
            <th scope="col">Actual</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {conditions.map((c, i) => (
            <tr key={i}>
              <td>
                <code>{c.prop}</code>
              </td>
              <td>{c.op}</td>
              <td>
                <code>{formatValue(c.value)}</code>
              </td>
              <td>
                <code>{c.actual === undefined ? '—' : formatValue(c.actual)}</code>
              </td>
              <td>
                <Verdict passed={c.passed} />
                {c.depends_on ? <span className="small muted"> (known after {c.depends_on})</span> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

const RUNS: Record<string, { label: string; tone: string }> = {
  yes: { label: 'would run', tone: 'badge-ok' },
  no: { label: 'would not run', tone: 'badge-danger' },
  unknown: { label: 'unknown', tone: 'badge-warn' },
};

export function DryRunPanel({
  automationId,
  unsaved,
  result,
  onResult,
}: {
  automationId: string;
  unsaved: boolean;
  result: DryRun | null;
  onResult: (r: DryRun | null) => void;
}) {
  const { projectId = '' } = useParams();
  const media = useLoad(
    async () => ok(await api.GET('/media', { params: { query: { page: 1, limit: 50 } } })).data,
    `${projectId}:media`,
  );
  const [mediaId, setMediaId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const chosen = mediaId || media.data?.[0]?.id || '';
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      onResult(
        ok(
          await api.POST('/automations/{id}/dry-run', {
            params: { path: { id: automationId } },
            body: { media_id: chosen },
          }),
        ).data,
      );
    } catch (err) {
      onResult(null);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card stack" aria-labelledby="dry-run-heading">
      <h2 id="dry-run-heading">Dry run</h2>
      <p className="muted small">
        What the saved automation would do on a media&apos;s file, decided by the code a run uses. Nothing is created.
        {unsaved ? ' You have unsaved changes: the dry run uses the saved version.' : ''}
      </p>
      <ErrorBanner error={media.error} onRetry={media.reload} />
      <div className="row dry-run-form">
        <Field label="Media">
          {(p) => (
            <select {...p} value={chosen} onChange={(e) => setMediaId(e.target.value)}>
              {(media.data ?? []).length === 0 ? <option value="">No media yet</option> : null}
              {(media.data ?? []).map((m) => (
                <option key={m.id} value={m.id}>
                  {`${m.title ?? m.files.find((f) => f.ref === 'original')?.filename ?? m.files[0]?.filename ?? 'untitled'} (${m.kind ?? 'unknown kind'}) — ${m.id}`}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Button tone="primary" busy={busy} disabled={!chosen} onClick={run}>
          Dry run
        </Button>
      </div>
      <ErrorBanner error={error} />
      {result ? (
        <div className="dry-run-result stack" aria-live="polite" data-media={result.media_id}>
          <p>
            On{' '}
            <Link to={`/p/${projectId}/media/${result.media_id}`}>
              <code>{result.media_id}</code>
            </Link>{' '}
            (file <code>{result.file_id}</code>):{' '}
            {result.would_start ? (
              <span className="badge badge-ok">would start</span>
            ) : (
              <span className="badge badge-danger">would not start</span>
            )}{' '}
            {result.automation_status !== 'active' ? (
              <span className="small muted">(the automation is {result.automation_status})</span>
            ) : null}
          </p>
          <h3>
            Trigger <code>{result.trigger.event}</code> <Verdict passed={result.trigger.passed} />
          </h3>
          <ConditionsTable conditions={result.trigger.conditions} caption="Trigger conditions" />
          {result.problems.length > 0 ? (
            <ul className="field-error">
              {result.problems.map((p) => (
                <li key={`${p.field}:${p.message}`}>
                  <code>{p.field}</code>: {p.message}
                </li>
              ))}
            </ul>
          ) : null}
          <ol className="dry-steps">
            {result.steps.map((s) => {
              const runs = RUNS[s.runs] ?? { label: s.runs, tone: '' };
              const depth = (s.path.match(/\.next\[/g) ?? []).length;
              return (
                <li
                  key={s.path}
                  className="dry-step"
                  data-path={s.path}
                  data-runs={s.runs}
                  data-branch={s.branch ?? ''}
                  style={{ marginInlineStart: `${depth * 1.5}rem` }}
                >
                  <div className="row">
                    <code>{s.path}</code> <strong>{s.kind}</strong>{' '}
                    <span className={`badge ${runs.tone}`}>{runs.label}</span>
                    {s.branch ? (
                      <span
                        className={`badge ${s.branch === 'taken' ? 'badge-ok' : s.branch === 'not_taken' ? 'badge-danger' : 'badge-warn'}`}
                      >
                        branch {s.branch.replace('_', ' ')}
                      </span>
                    ) : null}
                  </div>
                  <p className="small muted">
                    {s.reason}
                    {s.input_file_id
                      ? ` · on ${s.input_file_id}`
                      : s.input_from
                        ? ` · on the output of ${s.input_from}`
                        : ''}
                  </p>
                  {s.conditions ? (
                    <ConditionsTable conditions={s.conditions} caption={`Conditions of ${s.path}`} />
                  ) : null}
                  {s.problems.length > 0 ? (
                    <ul className="field-error">
                      {s.problems.map((p) => (
                        <li key={`${p.field}:${p.message}`}>
                          <code>{p.field}</code>: {p.message}
                        </li>
                      ))}
                    </ul>
                  ) : null}
                </li>
              );
            })}
          </ol>
        </div>
      ) : null}
    </section>
  );
}
