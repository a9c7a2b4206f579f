import { useState } from 'react';
import { useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Body, Project } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { PageHeader } from '../../components/page-header';
import { Secret } from '../../components/secret';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { useBusy } from '../../lib/use-busy';
import { ImageUrlSettings } from './image-urls-settings';

// Project settings (GET/PATCH /project): signed delivery and the default API version; the
// webhook signing secret, revealed on request and rotated with confirmation.

type ApiVersion = NonNullable<Body<'/project', 'patch'>['api_version']>;
const VERSIONS: { value: ApiVersion; label: string }[] = [
  { value: '2025-07-01', label: '2025-07-01 — envelope ({meta, data, error, links})' },
  { value: '2025-01-01', label: '2025-01-01 — envelope, first version' },
  { value: '2025-08-20', label: '2025-08-20 — bare objects (the 1.0 SDKs)' },
];

export default function SettingsPage() {
  const { projectId } = useParams();
  const session = useSignedIn();
  const { canManage } = permissionsFor(membershipOf(session, projectId)?.role);
  const project = useLoad(async () => ok(await api.GET('/project')).data, `project:${projectId}`);
  return (
    <div className="page">
      <PageHeader
        title="Settings"
        description="How this project delivers files, answers API requests and signs webhooks."
        actions={<CopyAsCurl path="/project" />}
      />
      {!canManage ? (
        <div className="banner banner-warn" role="note">
          Only owners and admins of the organisation change project settings.
        </div>
      ) : null}
      <ErrorBanner error={project.error} onRetry={project.reload} />
      {project.loading ? <Skeleton lines={4} /> : null}
      {project.data ? (
        <ProjectForm
          key={project.data.id + project.data.api_version}
          project={project.data}
          canManage={canManage}
          onSaved={project.reload}
        />
      ) : null}
      {canManage ? <WebhookSecret /> : null}
      <ImageUrlSettings projectId={projectId} canManage={canManage} />
    </div>
  );
}

function ProjectForm({ project, canManage, onSaved }: { project: Project; canManage: boolean; onSaved: () => void }) {
  const [signed, setSigned] = useState(project.require_signed_delivery);
  const [version, setVersion] = useState<ApiVersion>(project.api_version);
  const { busy, error, submit } = useBusy();
  const toast = useToast();
  const changed = signed !== project.require_signed_delivery || version !== project.api_version;
  return (
    <section className="card" aria-labelledby="project-h">
      <h2 id="project-h">{project.name}</h2>
      <p className="muted small">
        <code>{project.id}</code> · created <Time iso={project.created} />
      </p>
      <form
        className="stack"
        onSubmit={submit(async () => {
          ok(await api.PATCH('/project', { body: { require_signed_delivery: signed, api_version: version } }));
          toast({ title: 'Settings saved', tone: 'success' });
          onSaved();
        })}
      >
        <label className="check">
          <input type="checkbox" checked={signed} disabled={!canManage} onChange={(e) => setSigned(e.target.checked)} />
          Require signed URLs to download files
        </label>
        <p className="field-hint">
          When on, file URLs answer only with a valid signature (<code>POST /signatures</code>).
        </p>
        <Field label="Default API version" hint="For requests that send no Accept-Version header.">
          {(p) => (
            <select
              {...p}
              value={version}
              disabled={!canManage}
              onChange={(e) => setVersion(VERSIONS.find((v) => v.value === e.target.value)?.value ?? version)}
            >
              {VERSIONS.map((v) => (
                <option key={v.value} value={v.value}>
                  {v.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorBanner error={error} />
        {canManage ? (
          <div>
            <Button type="submit" tone="primary" busy={busy} disabled={!changed}>
              Save settings
            </Button>
          </div>
        ) : null}
      </form>
    </section>
  );
}

function WebhookSecret() {
  const [secret, setSecret] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const toast = useToast();
  return (
    <section className="card stack" aria-labelledby="secret-h">
      <h2 id="secret-h">Webhook signing secret</h2>
      <p className="muted">
        mediad signs every webhook with this secret (Standard Webhooks). Rotating it keeps the previous secret valid for
        a while, so receivers can switch without missing deliveries.
      </p>
      {secret ? (
        <Secret value={secret} label="Webhook signing secret" />
      ) : (
        <div>
          <Button
            busy={busy}
            onClick={async () => {
              setBusy(true);
              setError(null);
              try {
                setSecret(ok(await api.GET('/project/webhook-secret')).data.secret);
              } catch (err) {
                setError(err);
              } finally {
                setBusy(false);
              }
            }}
          >
            Reveal secret
          </Button>
        </div>
      )}
      <ErrorBanner error={error} />
      <div>
        <ConfirmDialog
          trigger={<Button tone="danger">Rotate secret</Button>}
          title="Rotate the webhook signing secret?"
          description="A new secret signs webhooks from now on. Update your receivers."
          confirmLabel="Rotate"
          onConfirm={async () => {
            const d = ok(await api.POST('/project/webhook-secret/rotate')).data;
            setSecret(d.secret);
            toast({
              title: 'Secret rotated',
              description: d.previous_secret_expires
                ? `The previous one is accepted until ${new Date(d.previous_secret_expires).toLocaleString()}.`
                : undefined,
              tone: 'success',
            });
          }}
        />
      </div>
    </section>
  );
}
