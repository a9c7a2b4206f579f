import { Dialog } from 'radix-ui';
import { useEffect, useId, useState, type KeyboardEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { ApiError } from '../../lib/api/client';
import { firstProject, membershipOf, useSignedIn } from '../../lib/session';
import { ErrorBanner } from '../../components/error-banner';
import { matches, useCommands, type Command } from './commands';
import { ID, KINDS, locate } from './locate';
import { CommandList, optionId } from './command-list';
import './command-palette.css';

// The command palette (Ctrl/⌘-K): jump to an object by its id (fetched through the API, so an id of
// another project or a deleted object says so instead of opening an empty page), to a page by name,
// or run a common action. A Radix dialog holding a combobox and its listbox (arrow keys, Enter, Esc).

export function CommandPalette() {
  const params = useParams();
  const session = useSignedIn();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const listId = useId();
  const inputId = useId();

  const inProject = params.projectId && membershipOf(session, params.projectId) ? params.projectId : null;
  const projectId = inProject ?? firstProject(session);

  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setOpen((o) => !o);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const commands = useCommands(projectId);

  const trimmed = query.trim();
  const idMatch = ID.exec(trimmed);
  const shown: Command[] = [];
  if (idMatch && projectId) {
    const projects = session.memberships.flatMap((m) => m.projects.map((p) => p.id));
    shown.push({
      key: `open:${trimmed}`,
      label: `Open ${KINDS[idMatch[1]!] ?? 'object'} ${trimmed}`,
      group: 'Open',
      run: async () => navigate(await locate(projectId, trimmed, projects)),
    });
  }
  const words = trimmed.toLowerCase().split(/\s+/).filter(Boolean);
  if (!idMatch) shown.push(...commands.filter((c) => matches(c, words)));
  const current = Math.min(active, Math.max(0, shown.length - 1));

  const close = () => {
    setOpen(false);
    setQuery('');
    setActive(0);
    setError(null);
  };

  const run = async (c: Command | undefined) => {
    if (!c || busy) return;
    setBusy(true);
    setError(null);
    try {
      await c.run();
      close();
    } catch (err) {
      setError(
        err instanceof ApiError && err.code === 'not_found'
          ? new ApiError({ code: 'not_found', message: `Nothing with the id ${trimmed} in this project.`, status: 404 })
          : err,
      );
    } finally {
      setBusy(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      setActive((current + 1) % Math.max(1, shown.length));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      setActive((current - 1 + shown.length) % Math.max(1, shown.length));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      void run(shown[current]);
    }
  };

  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        if (o) setOpen(true);
        else close();
      }}
    >
      <Dialog.Trigger asChild>
        <button type="button" className="btn palette-trigger" aria-keyshortcuts="Control+K Meta+K">
          <span>Search or jump to…</span>
          <kbd aria-hidden="true">Ctrl K</kbd>
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content className="dialog palette" aria-describedby={undefined}>
          <Dialog.Title className="sr-only">Command palette</Dialog.Title>
          <label htmlFor={inputId} className="sr-only">
            Page, action, or an id such as med_…
          </label>
          <input
            id={inputId}
            role="combobox"
            aria-expanded="true"
            aria-controls={listId}
            aria-autocomplete="list"
            aria-activedescendant={shown.length > 0 ? optionId(listId, current) : undefined}
            placeholder="Type a page or action, or paste an id (med_…, task_…, we_…)"
            value={query}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => {
              setQuery(e.target.value);
              setActive(0);
              setError(null);
            }}
            onKeyDown={onKeyDown}
            aria-busy={busy || undefined}
          />
          <CommandList id={listId} commands={shown} current={current} onHover={setActive} onRun={(c) => void run(c)} />
          <ErrorBanner error={error} />
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
