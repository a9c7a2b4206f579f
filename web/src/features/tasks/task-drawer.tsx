import { Dialog } from 'radix-ui';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { CopyButton } from '../../components/copy-button';
import { ErrorBanner } from '../../components/error-banner';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLiveLoad } from './use-live-load';
import { FINAL, str, formatDuration } from './tasks-model';
import { StatusBadge, Progress, TaskActions, Place } from './task-parts';

// One task in a drawer docked right (?task=<id>), so the list stays where it was.

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="task-section" aria-label={title}>
      <h3>{title}</h3>
      {children}
    </section>
  );
}

function Json({ value, label }: { value: unknown; label: string }) {
  const text = JSON.stringify(value, null, 2);
  return (
    <div className="task-json">
      <pre aria-label={`${label} (JSON)`} tabIndex={0}>
        {text}
      </pre>
      <CopyButton value={text} className="task-json-copy" label={`Copy ${label.toLowerCase()}`} />
    </div>
  );
}

/** One task: input, options, output, timings, failure, steps, actions and "copy as curl". */
export function TaskDrawer({
  id,
  projectId,
  canWrite,
  taskLink,
  onClose,
  onChanged,
  onFilterAutomation,
}: {
  id: string | null;
  projectId: string;
  canWrite: boolean;
  taskLink: (id: string) => string;
  onClose: () => void;
  onChanged: () => void;
  onFilterAutomation: (id: string) => void;
}) {
  return (
    <Dialog.Root open={id !== null} onOpenChange={(open) => (open ? undefined : onClose())}>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content className="task-drawer" aria-describedby={undefined}>
          {id ? (
            <TaskDetail
              id={id}
              projectId={projectId}
              canWrite={canWrite}
              taskLink={taskLink}
              onChanged={onChanged}
              onFilterAutomation={onFilterAutomation}
            />
          ) : null}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

function TaskDetail({
  id,
  projectId,
  canWrite,
  taskLink,
  onChanged,
  onFilterAutomation,
}: {
  id: string;
  projectId: string;
  canWrite: boolean;
  taskLink: (id: string) => string;
  onChanged: () => void;
  onFilterAutomation: (id: string) => void;
}) {
  const [final, setFinal] = useState(false);
  const loaded = useLiveLoad(
    async () => ok(await api.GET('/tasks/{id}', { params: { path: { id } } })).data,
    id,
    !final,
  );
  const task = loaded.data;
  const isFinal = task ? FINAL.has(task.status) : false;
  if (isFinal !== final) setFinal(isFinal);
  const outputUrl = str(task?.output, 'url');
  return (
    <>
      <div className="task-drawer-head">
        <Dialog.Title>{task ? `${task.kind} task` : 'Task'}</Dialog.Title>
        <Dialog.Close asChild>
          <button type="button" className="btn btn-small" aria-label="Close">
            ×
          </button>
        </Dialog.Close>
      </div>
      <div className="row">
        <code>{id}</code>
        <CopyButton value={id} label="Copy id" />
        <CopyAsCurl path={`/tasks/${id}`} />
      </div>
      <ErrorBanner error={loaded.error} onRetry={loaded.reload} />
      {!task ? (
        loaded.loading ? (
          <Skeleton lines={5} label="Loading the task" />
        ) : null
      ) : (
        <>
          <div className="row">
            <StatusBadge status={task.status} />
            <Progress task={task} />
          </div>
          {task.status === 'failed' ? (
            <div className="banner banner-error" role="alert">
              <div>
                <strong>{task.error ?? 'The task failed.'}</strong>
                <p>
                  Code <code>{task.error_code ?? 'failed'}</code> after {task.attempts}{' '}
                  {task.attempts === 1 ? 'attempt' : 'attempts'}.
                </p>
              </div>
            </div>
          ) : null}
          {canWrite ? (
            <TaskActions
              task={task}
              onChanged={() => {
                setFinal(false);
                loaded.reload();
                onChanged();
              }}
            />
          ) : null}

          <Section title="Timings">
            <dl className="task-kv">
              <dt>Created</dt>
              <dd>
                <Time iso={task.created} />
              </dd>
              <dt>Started</dt>
              <dd>
                <Time iso={task.started} />
                {formatDuration(task.created, task.started) ? (
                  <span className="muted"> (queued {formatDuration(task.created, task.started)})</span>
                ) : null}
              </dd>
              <dt>Finished</dt>
              <dd>
                <Time iso={task.finished} />
                {formatDuration(task.started, task.finished) ? (
                  <span className="muted"> (ran {formatDuration(task.started, task.finished)})</span>
                ) : null}
              </dd>
              <dt>Attempts</dt>
              <dd>{task.attempts}</dd>
              {task.retry_of ? (
                <>
                  <dt>Retry of</dt>
                  <dd>
                    <Link to={taskLink(task.retry_of)}>{task.retry_of}</Link>
                  </dd>
                </>
              ) : null}
              {task.parent_id ? (
                <>
                  <dt>Step of</dt>
                  <dd>
                    <Link to={taskLink(task.parent_id)}>{task.parent_id}</Link>
                  </dd>
                </>
              ) : null}
              {task.automation_id ? (
                <>
                  <dt>Automation</dt>
                  <dd>
                    <button
                      type="button"
                      className="link-button"
                      onClick={() => onFilterAutomation(task.automation_id ?? '')}
                    >
                      {task.automation_id}
                    </button>{' '}
                    <span className="muted small">(shows its tasks)</span>
                  </dd>
                </>
              ) : null}
            </dl>
          </Section>

          <Section title="Input">
            <Place value={task.input} projectId={projectId} />
            {task.input ? <Json value={task.input} label="Input" /> : null}
          </Section>

          <Section title="Options">
            {Object.keys(task.options).length ? (
              <Json value={task.options} label="Options" />
            ) : (
              <p className="muted">None</p>
            )}
          </Section>

          <Section title="Output">
            {task.output ? (
              <>
                <div className="row">
                  <Place value={task.output} projectId={projectId} />
                  {outputUrl ? (
                    <a href={outputUrl} target="_blank" rel="noreferrer">
                      Open the file
                    </a>
                  ) : null}
                </div>
                <Json value={task.output} label="Output" />
              </>
            ) : (
              <p className="muted">{isFinal ? 'No output.' : 'Not yet: the task has not completed.'}</p>
            )}
            {task.results ? <Json value={task.results} label="Results" /> : null}
          </Section>

          {task.workflow?.length ? (
            <Section title="Steps">
              <ol className="task-steps">
                {task.workflow.map((s) => (
                  <li key={s.id}>
                    <Link to={taskLink(s.id)}>{s.id}</Link> <span className="muted">{s.kind}</span>{' '}
                    <StatusBadge status={s.status} />
                  </li>
                ))}
              </ol>
            </Section>
          ) : null}

          {task.webhook_url ? (
            <Section title="Webhook">
              <code className="small">{task.webhook_url}</code>
            </Section>
          ) : null}
        </>
      )}
    </>
  );
}
