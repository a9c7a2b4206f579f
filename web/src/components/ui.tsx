import { Dialog } from 'radix-ui';
import {
  useCallback,
  useEffect,
  useId,
  useRef,
  useState,
  type ButtonHTMLAttributes,
  type ReactElement,
  type ReactNode,
} from 'react';
import { asApiError, type ApiError } from '../lib/api/client';
import { useToast } from './toast';
import { curlWithCa, useCaFile } from '../lib/local-ca';

// Shared building blocks for every page: headers, empty states, skeletons, the error banner, a
// data table, copy buttons, "copy as curl", the confirm dialog and form fields.

export function PageHeader({
  title,
  description,
  actions,
}: {
  title: string;
  description?: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {description ? <p className="muted">{description}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}

export function EmptyState({
  title,
  description,
  action,
}: {
  title: string;
  description?: ReactNode;
  action?: ReactNode;
}) {
  return (
    <div className="empty-state" role="status">
      <h2>{title}</h2>
      {description ? <p className="muted">{description}</p> : null}
      {action}
    </div>
  );
}

/** Placeholder lines while something loads (announced to screen readers once). */
export function Skeleton({ lines = 3, label = 'Loading' }: { lines?: number; label?: string }) {
  return (
    <div className="skeleton" role="status" aria-live="polite">
      <span className="sr-only">{label}…</span>
      {Array.from({ length: lines }, (_, i) => (
        <div key={i} className="skeleton-line" aria-hidden="true" />
      ))}
    </div>
  );
}

/** An API error as the person should see it: what happened, its code, and what to do. */
export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const e: ApiError = asApiError(error);
  return (
    <div className="banner banner-error" role="alert">
      <div>
        <strong>{e.message}</strong>
        <p>
          {e.hint}{' '}
          <span className="muted">
            ({e.code}
            {e.requestId ? `, request ${e.requestId}` : ''})
          </span>
        </p>
        {e.details.length > 0 ? (
          <ul>
            {e.details.map((d) => (
              <li key={`${d.field}:${d.message}`}>
                <code>{d.field}</code>: {d.message}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      {onRetry ? (
        <button type="button" className="btn" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export interface Column<T> {
  key: string;
  header: ReactNode;
  cell: (row: T) => ReactNode;
  className?: string;
}

export function DataTable<T>({
  columns,
  rows,
  rowKey,
  caption,
  empty,
}: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  caption: string;
  empty?: ReactNode;
}) {
  if (rows.length === 0 && empty) return <>{empty}</>;
  return (
    <div className="table-wrap">
      <table className="data-table">
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col" className={c.className}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={rowKey(r)} data-row={rowKey(r)}>
              {columns.map((c) => (
                <td key={c.key} className={c.className}>
                  {c.cell(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

async function writeClipboard(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

export function CopyButton({
  value,
  label = 'Copy',
  className,
}: {
  value: string;
  label?: string;
  className?: string;
}) {
  const [copied, setCopied] = useState(false);
  const toast = useToast();
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(t);
  }, [copied]);
  return (
    <button
      type="button"
      className={`btn btn-small ${className ?? ''}`}
      onClick={async () => {
        if (await writeClipboard(value)) setCopied(true);
        else toast({ title: 'Could not copy', description: 'Select the text and copy it yourself.', tone: 'error' });
      }}
    >
      <span aria-live="polite">{copied ? 'Copied' : label}</span>
    </button>
  );
}

/** The curl command for an object's GET, with the key as a placeholder (never a secret) and the local CA. */
export function curlFor(path: string, caFile: string | null | undefined): string {
  return `${curlWithCa(caFile)} -H "Authorization: Bearer $MEDIAD_API_KEY" ${window.location.origin}${path}`;
}

export function CopyAsCurl({ path }: { path: string }) {
  const caFile = useCaFile();
  // Until the CA file is known the command would lack --cacert: nothing to copy yet.
  if (caFile === undefined)
    return (
      <button type="button" className="btn btn-small" disabled>
        Copy as curl
      </button>
    );
  return <CopyButton value={curlFor(path, caFile)} label="Copy as curl" />;
}

/** A value shown in monospace with its copy button. */
export function Secret({ value, label }: { value: string; label: string }) {
  return (
    <div className="secret">
      <code aria-label={label} data-secret>
        {value}
      </code>
      <CopyButton value={value} />
    </div>
  );
}

export function Button({
  tone = 'default',
  busy = false,
  children,
  className,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { tone?: 'default' | 'primary' | 'danger'; busy?: boolean }) {
  return (
    <button
      type="button"
      {...rest}
      className={`btn ${tone === 'primary' ? 'btn-primary' : tone === 'danger' ? 'btn-danger' : ''} ${className ?? ''}`}
      disabled={busy || rest.disabled}
      aria-busy={busy || undefined}
    >
      {children}
    </button>
  );
}

/** A labelled form control: the label, the control, a hint and an error, tied together for assistive tech. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ReactNode;
  error?: string | undefined;
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ReactElement;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        ...(describedBy ? { 'aria-describedby': describedBy } : {}),
        ...(error ? { 'aria-invalid': true } : {}),
      })}
      {hint ? (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={errorId} className="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/**
 * A dialog that asks before doing something. With `typed`, the person types that text to enable
 * the button (for deletions that cannot be undone).
 */
export function ConfirmDialog({
  trigger,
  title,
  description,
  confirmLabel,
  typed,
  tone = 'danger',
  onConfirm,
}: {
  trigger: ReactElement;
  title: string;
  description: ReactNode;
  confirmLabel: string;
  typed?: string;
  tone?: 'primary' | 'danger';
  onConfirm: () => Promise<unknown>;
}) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const inputId = useId();
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setOpen(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (!o) {
          setText('');
          setError(null);
        }
      }}
    >
      <Dialog.Trigger asChild>{trigger}</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content className="dialog" role="alertdialog">
          <Dialog.Title>{title}</Dialog.Title>
          <Dialog.Description asChild>
            <div className="muted">{description}</div>
          </Dialog.Description>
          {typed ? (
            <div className="field">
              <label htmlFor={inputId}>
                Type <strong>{typed}</strong> to confirm
              </label>
              <input id={inputId} value={text} onChange={(e) => setText(e.target.value)} autoComplete="off" />
            </div>
          ) : null}
          <ErrorBanner error={error} />
          <div className="dialog-actions">
            <Dialog.Close asChild>
              <Button>Cancel</Button>
            </Dialog.Close>
            <Button tone={tone} busy={busy} disabled={typed !== undefined && text !== typed} onClick={run}>
              {confirmLabel}
            </Button>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

/** A plain dialog with a title (for forms). */
export function FormDialog({
  open,
  onOpenChange,
  title,
  description,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: ReactNode;
  children: ReactNode;
}) {
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content className="dialog" {...(description ? {} : { 'aria-describedby': undefined })}>
          <Dialog.Title>{title}</Dialog.Title>
          {description ? <Dialog.Description className="muted">{description}</Dialog.Description> : null}
          {children}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads data with `load` when `key` changes (and on reload()); the latest answer wins. With
 * `refreshMs`, loads again on that interval (live pages) without showing the skeleton again.
 */
export function useLoad<T>(load: () => Promise<T>, key: string, refreshMs?: number): Loaded<T> {
  const [tick, setTick] = useState(0);
  const [result, setResult] = useState<{ key: string; data: T | undefined; error: unknown } | null>(null);
  const loadRef = useRef(load);
  useEffect(() => {
    loadRef.current = load;
  });
  useEffect(() => {
    let live = true;
    loadRef.current().then(
      (data) => {
        if (live) setResult({ key, data, error: null });
      },
      (error: unknown) => {
        if (live) setResult((r) => ({ key, data: r?.key === key ? r.data : undefined, error }));
      },
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  useEffect(() => {
    if (!refreshMs) return;
    const t = setInterval(() => setTick((n) => n + 1), refreshMs);
    return () => clearInterval(t);
  }, [refreshMs]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  const current = result?.key === key ? result : null;
  return { data: current?.data, error: current?.error ?? null, loading: current === null, reload };
}

/** Bytes as a short human figure. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** An ISO time as a local date and time (the full ISO in the title). */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>;
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={iso}>
      {d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
}
