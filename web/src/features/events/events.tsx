import { useId } from 'react';
import { Link } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { Pager, useListParams, withParam } from '../../components/pager';
import { describeEventType, EVENT_PREFIXES, EVENT_TYPES, isEventFilter, linksOf } from '../../lib/event-types';

// The project's event log (GET /events): newest first, a type filter and the page in the URL, each
// event's data as formatted JSON with links to the objects it names. ?event=evt_… shows one event
// on top (the command palette jumps there).

type EventObject = Data<'/events', 'get'>[number];
const LIMIT = 25;

function EventCard({ event, projectId, open }: { event: EventObject; projectId: string; open?: boolean }) {
  const links = linksOf(projectId, event.type, event.data);
  return (
    <li className="event" data-event={event.id}>
      <div className="event-head">
        <span className="badge" title={describeEventType(event.type)}>
          {event.type}
        </span>
        <code className="small">{event.id}</code>
        <Time iso={event.created} />
        {event.cause ? (
          <span className="small muted">
            caused by automation{' '}
            <Link to={`/p/${projectId}/tasks?automation_id=${event.cause.automation_id}`}>
              {event.cause.automation_id}
            </Link>
          </span>
        ) : null}
      </div>
      {links.length > 0 ? (
        <ul className="event-links" aria-label={`Objects named by ${event.id}`}>
          {links.map((l) => (
            <li key={l.id}>
              <Link to={l.to}>
                {l.label} <code>{l.id}</code>
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
      <details open={open}>
        <summary>Data</summary>
        <pre className="json">{JSON.stringify(event.data, null, 2)}</pre>
        <CopyAsCurl path={`/events/${event.id}`} />
      </details>
    </li>
  );
}

export default function EventsPage() {
  const { projectId, params, setParams, page, openId: eventId, hrefFor } = useListParams('event');
  const typeParam = params.get('type');
  const type = isEventFilter(typeParam) ? typeParam : undefined;
  const selectId = useId();

  const list = useLoad(
    async () => ok(await api.GET('/events', { params: { query: { page, limit: LIMIT, ...(type ? { type } : {}) } } })),
    JSON.stringify([projectId, type, page]),
  );
  const one = useLoad(
    async () => (eventId ? ok(await api.GET('/events/{id}', { params: { path: { id: eventId } } })).data : null),
    `${projectId}:${eventId}`,
  );

  return (
    <div className="page">
      <PageHeader
        title="Events"
        description="Everything that changed in this project, newest first: what webhook endpoints receive."
        actions={<CopyAsCurl path={`/events${type ? `?type=${type}` : ''}`} />}
      />
      <div className="row">
        <label htmlFor={selectId}>Type</label>
        <select
          id={selectId}
          className="narrow-select"
          value={type ?? ''}
          onChange={(e) => setParams((prev) => withParam(prev, 'type', e.target.value, ['page', 'event']))}
        >
          <option value="">All types</option>
          <optgroup label="By resource">
            {EVENT_PREFIXES.map((p) => (
              <option key={p} value={p}>
                {p} — {describeEventType(p)}
              </option>
            ))}
          </optgroup>
          <optgroup label="One type">
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </optgroup>
        </select>
        <button type="button" className="btn btn-small" onClick={list.reload}>
          Refresh
        </button>
      </div>

      {eventId ? (
        <section aria-label="The event asked for" className="stack">
          <ErrorBanner error={one.error} />
          {one.data ? (
            <ul className="events">
              <EventCard event={one.data} projectId={projectId} open />
            </ul>
          ) : null}
        </section>
      ) : null}

      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading ? (
        <Skeleton lines={6} label="Loading events" />
      ) : list.data ? (
        list.data.data.length === 0 ? (
          <EmptyState
            title={type ? `No ${type} events` : 'No events yet'}
            description="Create media, upload files or run tasks and their events appear here."
          />
        ) : (
          <>
            <ul className="events" aria-label="Events">
              {list.data.data.map((e) => (
                <EventCard key={e.id} event={e} projectId={projectId} />
              ))}
            </ul>
            <Pager meta={list.data.meta} hrefFor={hrefFor} />
          </>
        )
      ) : null}
    </div>
  );
}
