import { Dialog } from 'radix-ui';
import { useId, useState, type ReactElement, type ReactNode } from 'react';
import { Button } from './button';
import { ErrorBanner } from './error-banner';

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
