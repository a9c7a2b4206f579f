import { useState } from 'react';
import { api, asApiError, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { Button } from '../../components/button';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { Secret } from '../../components/secret';
import { describeEventType, EVENT_TYPES, type Subscription } from '../../lib/event-types';

// Creating and editing a webhook endpoint, and the dialog that shows a new secret once.

export type Endpoint = Data<'/webhooks', 'get'>[number];

/** The API's message for a field (validation_failed details name `url`, `events[2]` …). */
function fieldError(error: unknown, field: string): string | undefined {
  if (!error) return undefined;
  return asApiError(error).details.find((d) => d.field === field || d.field.startsWith(`${field}[`))?.message;
}

/** The create / edit form (edit when `endpoint` is given). Calls onSaved with the answer (which carries the secret on create). */
export function EndpointDialog({
  open,
  endpoint,
  onClose,
  onSaved,
}: {
  open: boolean;
  endpoint?: Endpoint;
  onClose: () => void;
  onSaved: (saved: Endpoint) => void;
}) {
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [all, setAll] = useState(endpoint ? endpoint.events.includes('*') : true);
  const [types, setTypes] = useState<Set<string>>(new Set(endpoint?.events.filter((e) => e !== '*') ?? []));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async () => {
    const events: Subscription[] = all ? ['*'] : EVENT_TYPES.filter((t) => types.has(t));
    setBusy(true);
    setError(null);
    try {
      const body = { url: url.trim(), events, description: description.trim() || null };
      const saved = endpoint
        ? ok(await api.PATCH('/webhooks/{id}', { params: { path: { id: endpoint.id } }, body })).data
        : ok(await api.POST('/webhooks', { body })).data;
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <FormDialog
      open={open}
      onOpenChange={(o) => {
        if (!o) onClose();
      }}
      title={endpoint ? 'Edit webhook endpoint' : 'Add a webhook endpoint'}
      description="mediad POSTs each event you choose to this URL, signed with the endpoint's secret."
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field
          label="Endpoint URL"
          hint="https:// (http:// and private addresses only where the operator allows them)"
          error={fieldError(error, 'url')}
        >
          {(p) => (
            <input
              {...p}
              type="url"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              required
              placeholder="https://example.com/hooks/mediad"
            />
          )}
        </Field>
        <Field label="Description" hint="Optional: what receives these events.">
          {(p) => (
            <input {...p} value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1000} />
          )}
        </Field>
        <fieldset aria-describedby={fieldError(error, 'events') ? 'events-error' : undefined}>
          <legend>Events</legend>
          <label className="check">
            <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} />
            All events (<code>*</code>, including types added later)
          </label>
          {all ? null : (
            <div className="event-checks">
              {EVENT_TYPES.map((t) => (
                <label key={t} className="check" title={describeEventType(t)}>
                  <input
                    type="checkbox"
                    checked={types.has(t)}
                    onChange={(e) =>
                      setTypes((s) => {
                        const next = new Set(s);
                        if (e.target.checked) next.add(t);
                        else next.delete(t);
                        return next;
                      })
                    }
                  />
                  <code>{t}</code>
                </label>
              ))}
            </div>
          )}
          {fieldError(error, 'events') ? (
            <p id="events-error" className="field-error">
              {fieldError(error, 'events')}
            </p>
          ) : null}
        </fieldset>
        <ErrorBanner error={error} />
        <div className="dialog-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" tone="primary" busy={busy} disabled={!all && types.size === 0}>
            {endpoint ? 'Save' : 'Add endpoint'}
          </Button>
        </div>
      </form>
    </FormDialog>
  );
}

/** A secret that is shown this once (create, rotate), with what to do with it. */
export function NewSecretDialog({
  secret,
  title,
  previousExpires,
  onClose,
}: {
  secret: string | null;
  title: string;
  previousExpires?: string | undefined;
  onClose: () => void;
}) {
  return (
    <FormDialog
      open={secret !== null}
      onOpenChange={(o) => {
        if (!o) onClose();
      }}
      title={title}
      description="Copy the signing secret now: it is not shown again. Your receiver verifies each delivery with it."
    >
      {secret ? <Secret value={secret} label="Signing secret" /> : null}
      {previousExpires ? (
        <p className="muted small">
          The previous secret keeps signing beside this one until {new Date(previousExpires).toLocaleString()}.
        </p>
      ) : null}
      <div className="dialog-actions">
        <Button tone="primary" onClick={onClose}>
          I have saved it
        </Button>
      </div>
    </FormDialog>
  );
}
