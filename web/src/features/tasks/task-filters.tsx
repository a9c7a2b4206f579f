import { useState, type FormEvent } from 'react';
import { Button } from '../../components/button';
import { type Filter } from './retry-all';
import { STATUSES, STATUS_LABELS, KINDS, KIND_LABELS } from './tasks-model';

// The list's filters; each change goes through the URL (shareable, back-button safe).

export function Filters({
  filter,
  onChange,
}: {
  filter: Filter;
  onChange: (changes: Record<string, string | undefined>) => void;
}) {
  // The ids are typed, then applied (Enter or "Apply"); the selects apply at once.
  const [mediaId, setMediaId] = useState(filter.media_id ?? '');
  const [automationId, setAutomationId] = useState(filter.automation_id ?? '');
  const [seen, setSeen] = useState(filter);
  if (seen.media_id !== filter.media_id || seen.automation_id !== filter.automation_id) {
    setSeen(filter);
    setMediaId(filter.media_id ?? '');
    setAutomationId(filter.automation_id ?? '');
  }
  const apply = (e: FormEvent) => {
    e.preventDefault();
    onChange({ media_id: mediaId.trim() || undefined, automation_id: automationId.trim() || undefined });
  };
  return (
    <form className="task-filters" role="search" aria-label="Filter tasks" onSubmit={apply}>
      <div className="field">
        <label htmlFor="task-status">Status</label>
        <select
          id="task-status"
          value={filter.status ?? ''}
          onChange={(e) => onChange({ status: e.target.value || undefined })}
        >
          <option value="">Any status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {STATUS_LABELS[s]}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="task-kind">Kind</label>
        <select
          id="task-kind"
          value={filter.kind ?? ''}
          onChange={(e) => onChange({ kind: e.target.value || undefined })}
        >
          <option value="">Any kind</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {KIND_LABELS[k]}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="task-media">Media id</label>
        <input
          id="task-media"
          value={mediaId}
          onChange={(e) => setMediaId(e.target.value)}
          placeholder="med_…"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="field">
        <label htmlFor="task-automation">Automation id</label>
        <input
          id="task-automation"
          value={automationId}
          onChange={(e) => setAutomationId(e.target.value)}
          placeholder="auto_…"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="task-filter-buttons">
        <Button type="submit">Apply</Button>
      </div>
    </form>
  );
}
