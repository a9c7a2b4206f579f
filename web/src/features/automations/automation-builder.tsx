import { useEffect, useId, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, asApiError, ok, type ApiError } from '../../lib/api/client';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { DryRunPanel, type DryRun } from './automation-dry-run';
import { RunHistory } from './automation-runs';
import { ConditionsEditor, StepCard } from './automation-steps';
import {
  addStep,
  conditionsOf,
  draftOf,
  emptyDraft,
  errorsByField,
  errorsOfStep,
  errorsUnder,
  moveStep,
  parseDraft,
  removeStep,
  replaceStep,
  stepsOf,
  toJson,
  TRIGGER_EVENTS,
  type Automation,
  type Draft,
  type Step,
  type StepPath,
} from './automations-model';
import type { TaskConfig } from '../../lib/api/objects';
import './automations.css';

// The automation builder (/automations/new, /automations/{id}): name, trigger (event and
// conditions), the workflow as a vertical tree of step cards (options generated from GET
// /tasks-config), and the JSON body beside it, kept in sync both ways: a builder edit rewrites the
// JSON; valid JSON typed in the view replaces the tree. Save is POST (new) or PUT (the whole
// automation); the API's validation errors are shown at the step and field they name. A saved
// automation also has its dry run and run history.

function Builder({
  initial,
  automation,
  config,
  canWrite,
}: {
  initial: Draft;
  automation: Automation | null;
  config: Record<string, TaskConfig>;
  canWrite: boolean;
}) {
  const { projectId = '' } = useParams();
  const navigate = useNavigate();
  const toast = useToast();
  const jsonId = useId();
  const [draft, setDraft] = useState<Draft>(initial);
  const [json, setJson] = useState(() => toJson(initial));
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [revision, setRevision] = useState(0);
  const [saved, setSaved] = useState(() => toJson(initial));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [dryRun, setDryRun] = useState<DryRun | null>(null);
  const disabled = !canWrite;
  const workflow = stepsOf(draft.workflow);

  /** A change made in the builder: the JSON view follows. `structural` remounts the cards. */
  const change = (next: Draft, structural = false) => {
    setDraft(next);
    setJson(toJson(next));
    setJsonError(null);
    if (structural) setRevision((r) => r + 1);
  };
  const changeWorkflow = (w: Step[], structural = false) => change({ ...draft, workflow: w }, structural);
  const onJson = (text: string) => {
    setJson(text);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      setJsonError(`Not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    const parsed = parseDraft(value);
    if (typeof parsed === 'string') {
      setJsonError(parsed);
      return;
    }
    setJsonError(null);
    setDraft(parsed);
    setRevision((r) => r + 1);
  };

  const save = async () => {
    setBusy(true);
    setError(null);
    setErrors({});
    try {
      if (automation) {
        const a = ok(await api.PUT('/automations/{id}', { params: { path: { id: automation.id } }, body: draft })).data;
        setSaved(toJson(draft));
        toast({ title: `${a.name ?? a.id} saved`, tone: 'success' });
      } else {
        const a = ok(await api.POST('/automations', { body: draft })).data;
        toast({ title: `${a.name ?? a.id} created`, tone: 'success' });
        navigate(`/p/${projectId}/automations/${a.id}`, { replace: true });
      }
    } catch (err) {
      const e = asApiError(err);
      setErrors(errorsByField(e.details));
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const unsaved = toJson(draft) !== saved;
  // The dry run describes the saved automation: shown on the cards only while nothing changed since.
  const dry = new Map<string, { runs: string; branch?: string }>();
  if (dryRun && !unsaved)
    for (const s of dryRun.steps) dry.set(s.path, { runs: s.runs, ...(s.branch ? { branch: s.branch } : {}) });
  const topErrors = errorsOfStep(errors, 'workflow');
  const stepErrors = Object.fromEntries(Object.entries(errors).filter(([f]) => f.startsWith('workflow[')));
  const cardProps = {
    config,
    errors: stepErrors,
    revision,
    disabled,
    dry,
    onChange: (path: StepPath, step: Step) => changeWorkflow(replaceStep(workflow, path, step)),
    onRemove: (path: StepPath) => changeWorkflow(removeStep(workflow, path), true),
    onMove: (path: StepPath, by: -1 | 1) => changeWorkflow(moveStep(workflow, path, by), true),
    onAdd: (parent: StepPath) => changeWorkflow(addStep(workflow, parent, { kind: '' }), true),
  };

  return (
    <>
      <div className="builder-grid">
        <section className="card stack builder" aria-labelledby="builder-heading">
          <h2 id="builder-heading">Builder</h2>
          <fieldset disabled={disabled} className="stack">
            <Field label="Name" error={errors.name}>
              {(p) => (
                <input
                  {...p}
                  value={draft.name ?? ''}
                  onChange={(e) => change({ ...draft, name: e.target.value || null })}
                />
              )}
            </Field>
            <Field label="Description" error={errors.description}>
              {(p) => (
                <input
                  {...p}
                  value={draft.description ?? ''}
                  onChange={(e) => change({ ...draft, description: e.target.value || null })}
                />
              )}
            </Field>
          </fieldset>
          <section className="trigger-card" aria-label="Trigger">
            <h3>Trigger</h3>
            <Field label="When this event occurs" error={errors['trigger.event'] ?? errors.trigger}>
              {(p) => (
                <select
                  {...p}
                  value={draft.trigger.event}
                  disabled={disabled}
                  onChange={(e) => change({ ...draft, trigger: { ...draft.trigger, event: e.target.value } })}
                >
                  {TRIGGER_EVENTS.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                  {TRIGGER_EVENTS.some((t) => t === draft.trigger.event) ? null : (
                    <option value={draft.trigger.event}>{draft.trigger.event}</option>
                  )}
                </select>
              )}
            </Field>
            <ConditionsEditor
              key={`t${revision}`}
              label="Trigger conditions"
              conditions={conditionsOf(draft.trigger.conditions)}
              disabled={disabled}
              errors={errorsUnder(errors, 'trigger.conditions')}
              onChange={(c) => {
                const trigger: Draft['trigger'] = { kind: draft.trigger.kind, event: draft.trigger.event };
                if (c.length > 0) trigger.conditions = c;
                change({ ...draft, trigger });
              }}
            />
          </section>
          <h3>Workflow</h3>
          {topErrors[''] ? <p className="field-error">{topErrors['']}</p> : null}
          {workflow.length === 0 ? <p className="muted small">No steps yet: add the first one.</p> : null}
          <ol className="step-tree step-tree-root" aria-label="Workflow steps">
            {workflow.map((s, i) => (
              <StepCard key={`${revision}:${i}`} {...cardProps} step={s} path={[i]} siblings={workflow.length} />
            ))}
          </ol>
          {canWrite ? <Button onClick={() => cardProps.onAdd([])}>Add a step</Button> : null}
        </section>
        <section className="card stack json-view" aria-labelledby="json-heading">
          <h2 id="json-heading">JSON</h2>
          <div className="field">
            <label htmlFor={jsonId}>The automation as the API takes it</label>
            <textarea
              id={jsonId}
              className="json-editor"
              spellCheck={false}
              rows={24}
              value={json}
              readOnly={disabled}
              aria-invalid={jsonError ? true : undefined}
              aria-describedby={jsonError ? `${jsonId}-error` : undefined}
              onChange={(e) => onJson(e.target.value)}
            />
            {jsonError ? (
              <p id={`${jsonId}-error`} className="field-error">
                {jsonError} The builder shows the last valid JSON.
              </p>
            ) : null}
          </div>
        </section>
      </div>
      <ErrorBanner error={error} />
      {canWrite ? (
        <div className="row builder-save">
          <Button tone="primary" busy={busy} disabled={jsonError !== null} onClick={save}>
            {automation ? 'Save automation' : 'Create automation'}
          </Button>
          {automation && unsaved ? <span className="small muted">Unsaved changes</span> : null}
          {automation ? (
            <ConfirmDialog
              trigger={<Button tone="danger">Delete</Button>}
              title="Delete this automation?"
              description="It stops running; the tasks it started stay."
              confirmLabel="Delete"
              typed={automation.name ?? automation.id}
              onConfirm={async () => {
                ok(await api.DELETE('/automations/{id}', { params: { path: { id: automation.id } } }));
                toast({ title: 'Automation deleted', tone: 'success' });
                navigate(`/p/${projectId}/automations`);
              }}
            />
          ) : null}
        </div>
      ) : null}
      {automation ? (
        <>
          <DryRunPanel automationId={automation.id} unsaved={unsaved} result={dryRun} onResult={setDryRun} />
          <RunHistory automationId={automation.id} />
        </>
      ) : null}
    </>
  );
}

export default function AutomationBuilderPage() {
  const { projectId = '', id = 'new' } = useParams();
  const session = useSignedIn();
  const { canWrite } = permissionsFor(membershipOf(session, projectId)?.role);
  const isNew = id === 'new';
  const config = useLoad(async () => ok(await api.GET('/tasks-config')).data, 'tasks-config');
  const automation = useLoad(
    async () => (isNew ? null : ok(await api.GET('/automations/{id}', { params: { path: { id } } })).data),
    `${projectId}:${id}`,
  );
  useEffect(() => {
    if (window.location.hash === '#runs' && automation.data && config.data)
      document.getElementById('runs')?.scrollIntoView();
  }, [automation.data, config.data]);
  const a = automation.data ?? null;
  return (
    <div className="page">
      <PageHeader
        title={isNew ? 'New automation' : (a?.name ?? id)}
        description={
          <>
            <Link to={`/p/${projectId}/automations`}>Automations</Link>
            {a ? (
              <>
                {' '}
                · <code>{a.id}</code> ·{' '}
                <span className={`badge ${a.status === 'active' ? 'badge-ok' : ''}`}>{a.status}</span>
              </>
            ) : null}
          </>
        }
        actions={a ? <CopyAsCurl path={`/automations/${a.id}`} /> : undefined}
      />
      <ErrorBanner
        error={config.error ?? automation.error}
        onRetry={config.error ? config.reload : automation.reload}
      />
      {config.loading || automation.loading || !config.data ? (
        <Skeleton lines={6} label="Loading the automation" />
      ) : (
        <Builder
          key={a?.id ?? 'new'}
          initial={a ? draftOf(a) : emptyDraft()}
          automation={a}
          config={config.data}
          canWrite={canWrite}
        />
      )}
    </div>
  );
}
