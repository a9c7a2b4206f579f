import { useState } from 'react';
import { api, ok } from '../../lib/api/client';
import type { ApiKey } from '../../lib/api/types';
import { Button } from '../../components/button';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { Secret } from '../../components/secret';
import { type Family, type Access, type Scope, FAMILIES, toScope, ACCESS, EXPIRY, expiresAt } from './key-scopes';
import { useBusy } from '../../lib/use-busy';
import { ShownOnce } from '../../components/shown-once';

// Create a key: name, access per family, expiry; the full key is shown once, then only its hint.

export function CreateKeyDialog({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: () => void;
}) {
  const [name, setName] = useState('');
  const [full, setFull] = useState(true);
  const [access, setAccess] = useState<Record<Family, Access>>({
    files: 'read',
    tasks: 'read',
    automations: 'none',
    events: 'none',
    webhooks: 'none',
    project: 'none',
    secrets: 'none',
  });
  const [expiry, setExpiry] = useState('never');
  const { busy, error, setError, submit } = useBusy();
  const [made, setMade] = useState<ApiKey | null>(null);

  const scopes: Scope[] = full
    ? ['full']
    : FAMILIES.flatMap((f) => {
        const a = access[f.id];
        const s = a === 'none' ? undefined : toScope(`${f.id}:${a}`);
        return s ? [s] : [];
      });

  const reset = () => {
    setName('');
    setFull(true);
    setExpiry('never');
    setError(null);
    setMade(null);
  };

  return (
    <FormDialog
      open={open}
      onOpenChange={(o) => {
        if (!o) {
          reset();
          onClose();
        }
      }}
      title={made ? 'Your new API key' : 'Create an API key'}
      description={made ? undefined : 'Give it only the access it needs.'}
    >
      {made ? (
        <ShownOnce
          onDone={() => {
            reset();
            onClose();
          }}
        >
          <Secret value={made.key ?? ''} label="New API key" />
          <div className="banner banner-warn" role="note">
            Copy it now: it is shown only once. mediad keeps only its hash.
          </div>
        </ShownOnce>
      ) : (
        <form
          onSubmit={submit(async () => {
            const expires = expiresAt(expiry);
            const key = ok(await api.POST('/keys', { body: { name: name || null, scopes, expires } })).data;
            setMade(key);
            onCreated();
          })}
        >
          <Field label="Name" hint="What uses it, e.g. “website uploads”.">
            {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />}
          </Field>
          <fieldset>
            <legend>Access</legend>
            <label className="check">
              <input type="radio" name="access-kind" checked={full} onChange={() => setFull(true)} />
              Full access (everything, including managing keys)
            </label>
            <label className="check">
              <input type="radio" name="access-kind" checked={!full} onChange={() => setFull(false)} />
              Choose per resource
            </label>
            {!full ? (
              <table className="data-table scope-table">
                <caption className="sr-only">Access per resource</caption>
                <thead>
                  <tr>
                    <th scope="col">Resource</th>
                    <th scope="col">None</th>
                    <th scope="col">Read</th>
                    <th scope="col">Read and write</th>
                  </tr>
                </thead>
                <tbody>
                  {FAMILIES.map((f) => (
                    <tr key={f.id}>
                      <th scope="row">{f.label}</th>
                      {ACCESS.map((a) => (
                        <td key={a}>
                          <input
                            type="radio"
                            name={`scope-${f.id}`}
                            aria-label={`${f.label}: ${a === 'none' ? 'no access' : a === 'read' ? 'read' : 'read and write'}`}
                            checked={access[f.id] === a}
                            onChange={() => setAccess((x) => ({ ...x, [f.id]: a }))}
                          />
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </fieldset>
          <Field label="Expires">
            {(p) => (
              <select {...p} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
                {EXPIRY.map((x) => (
                  <option key={x.value} value={x.value}>
                    {x.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <ErrorBanner error={error} />
          <div className="dialog-actions">
            <Button
              onClick={() => {
                reset();
                onClose();
              }}
            >
              Cancel
            </Button>
            <Button type="submit" tone="primary" busy={busy} disabled={scopes.length === 0}>
              Create key
            </Button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
