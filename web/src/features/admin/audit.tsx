import { useId } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { paths } from '../../lib/api/schema';
import type { Data } from '../../lib/api/types';
import { pageHref, pageOf, Pager, withParam } from '../../components/pager';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import './admin.css';
import { PlainOptions } from '../../components/plain-options';

// The audit log of the organisation holding this project (GET /orgs/{id}/audit; owners and admins),
// or, for instance administrators, every record (GET /audit, ?scope=all). Filters (action, actor,
// from/to dates) and the page are kept in the URL.

type AuditRecord = Data<'/orgs/{id}/audit', 'get'>[number];
type AuditAction = NonNullable<NonNullable<paths['/orgs/{id}/audit']['get']['parameters']['query']>['action']>;

const ACTIONS = [
  'auth.setup',
  'auth.sign_in',
  'auth.sign_in_failed',
  'auth.sign_out',
  'account.password_changed',
  'key.created',
  'key.renamed',
  'key.paused',
  'key.resumed',
  'key.revoked',
  'member.added',
  'member.role_changed',
  'member.removed',
  'invitation.created',
  'invitation.accepted',
  'invitation.revoked',
  'org.created',
  'org.renamed',
  'org.deleted',
  'project.created',
  'project.renamed',
  'project.deleted',
  'project.settings_changed',
  'project.webhook_secret_rotated',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'queue.kind_paused',
  'queue.kind_resumed',
  'user.created',
  'project.image_url_key_revealed',
  'project.image_url_key_rotated',
] as const satisfies readonly AuditAction[];
// Every action the API filters by is offered (a new one in the API fails the typecheck here).
const EVERY_ACTION: [Exclude<AuditAction, (typeof ACTIONS)[number]>] extends [never] ? true : never = true;
void EVERY_ACTION;

function toAction(v: string | null): AuditAction | undefined {
  return ACTIONS.find((a) => a === v);
}
const LIMIT = 50;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const ID = /^[A-Za-z0-9_]{1,64}$/;

export default function AuditPage() {
  const { projectId } = useParams();
  const session = useSignedIn();
  const membership = membershipOf(session, projectId);
  const [params, setParams] = useSearchParams();
  const instance = session.user.is_admin && params.get('scope') === 'all';
  const action = toAction(params.get('action'));
  const actorParam = params.get('actor');
  const actor = actorParam && ID.test(actorParam) ? actorParam : undefined;
  const from = DAY.test(params.get('from') ?? '') ? (params.get('from') ?? undefined) : undefined;
  const to = DAY.test(params.get('to') ?? '') ? (params.get('to') ?? undefined) : undefined;
  const page = pageOf(params);
  const orgId = membership?.org.id ?? '';
  const scopeId = useId();
  const canRead = session.user.is_admin || permissionsFor(membership?.role).canManage;

  const query = {
    page,
    limit: LIMIT,
    ...(action ? { action } : {}),
    ...(actor ? { actor } : {}),
    // Dates are the person's local days.
    ...(from ? { created_after: new Date(`${from}T00:00:00`).toISOString() } : {}),
    ...(to ? { created_before: new Date(`${to}T23:59:59.999`).toISOString() } : {}),
  };
  const list = useLoad(
    async () =>
      instance
        ? ok(await api.GET('/audit', { params: { query } }))
        : ok(await api.GET('/orgs/{id}/audit', { params: { path: { id: orgId }, query } })),
    JSON.stringify([instance, orgId, query]),
  );
  const members = useLoad(
    async () =>
      ok(await api.GET('/orgs/{id}/members', { params: { path: { id: orgId }, query: { page: 1, limit: 100 } } })).data,
    orgId,
  );
  const nameOf = (id: string | undefined) => (id ? members.data?.find((m) => m.user_id === id)?.name : undefined);

  const set = (name: string, value: string | null) => setParams((prev) => withParam(prev, name, value));

  if (!canRead)
    return (
      <div className="page">
        <PageHeader title="Audit log" />
        <ErrorBanner error={new Error('Only owners and admins of this organisation read its audit log.')} />
      </div>
    );

  const actorOptions = members.data ?? [];
  return (
    <div className="page">
      <PageHeader
        title="Audit log"
        description={
          instance
            ? 'Every record of this mediad instance, newest first (failed sign-ins with unknown emails too).'
            : `Sign-ins, key, member, project and settings changes in ${membership?.org.name ?? 'this organisation'}, newest first.`
        }
        actions={<Link to={`/p/${projectId}/admin`}>← Organisation</Link>}
      />
      <form className="audit-filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Action">
          {(p) => (
            <select {...p} value={action ?? ''} onChange={(e) => set('action', e.target.value || null)}>
              <PlainOptions any="Any action" values={ACTIONS} />
            </select>
          )}
        </Field>
        <Field label="Actor">
          {(p) => (
            <select {...p} value={actor ?? ''} onChange={(e) => set('actor', e.target.value || null)}>
              <option value="">Anyone</option>
              {actorOptions.map((m) => (
                <option key={m.user_id} value={m.user_id}>
                  {m.name} ({m.email})
                </option>
              ))}
              {actor && !actorOptions.some((m) => m.user_id === actor) ? <option value={actor}>{actor}</option> : null}
            </select>
          )}
        </Field>
        <Field label="From">
          {(p) => <input {...p} type="date" value={from ?? ''} onChange={(e) => set('from', e.target.value || null)} />}
        </Field>
        <Field label="To">
          {(p) => <input {...p} type="date" value={to ?? ''} onChange={(e) => set('to', e.target.value || null)} />}
        </Field>
        {session.user.is_admin ? (
          <div className="field">
            <label htmlFor={scopeId}>
              <input
                id={scopeId}
                type="checkbox"
                checked={instance}
                onChange={(e) => set('scope', e.target.checked ? 'all' : null)}
              />{' '}
              Every organisation
            </label>
          </div>
        ) : null}
        {action || actor || from || to ? (
          <button type="button" className="btn btn-small" onClick={() => setParams(instance ? { scope: 'all' } : {})}>
            Clear filters
          </button>
        ) : null}
      </form>
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading ? (
        <Skeleton lines={6} label="Loading the audit log" />
      ) : list.data ? (
        <>
          <DataTable<AuditRecord>
            caption="Audit records"
            rows={list.data.data}
            rowKey={(r) => r.id}
            empty={<EmptyState title="No records" description="Nothing matches these filters." />}
            columns={[
              { key: 'time', header: 'Time', cell: (r) => <Time iso={r.created} /> },
              { key: 'action', header: 'Action', cell: (r) => <span className="badge">{r.action}</span> },
              {
                key: 'actor',
                header: 'Actor',
                cell: (r) =>
                  r.actor.id ? (
                    <button
                      type="button"
                      className="link-button"
                      title="Show only this actor's records"
                      onClick={() => set('actor', r.actor.id ?? null)}
                    >
                      {nameOf(r.actor.id) ?? r.actor.id}
                    </button>
                  ) : (
                    <span className="muted">{r.actor.type}</span>
                  ),
              },
              {
                key: 'target',
                header: 'Target',
                cell: (r) =>
                  r.target ? (
                    <span>
                      {r.target.type} {r.target.id ? <code className="small">{r.target.id}</code> : null}
                    </span>
                  ) : null,
              },
              {
                key: 'details',
                header: 'Details',
                className: 'audit-details',
                cell: (r) =>
                  Object.keys(r.details).length > 0 ? (
                    <details>
                      <summary>Details</summary>
                      <pre className="json">{JSON.stringify(r.details, null, 2)}</pre>
                    </details>
                  ) : null,
              },
              { key: 'ip', header: 'Address', cell: (r) => <span className="small">{r.ip ?? ''}</span> },
            ]}
          />
          <Pager meta={list.data.meta} hrefFor={(p) => pageHref(params, p)} noun={['record', 'records']} />
        </>
      ) : null}
    </div>
  );
}
