import type { Command } from './commands';

// The palette's listbox: the combobox above points at the active option by its id
// (aria-activedescendant), so the focus stays in the input while the arrow keys move.

export const optionId = (listId: string, i: number) => `${listId}-${i}`;

export function CommandList({
  id,
  commands,
  current,
  onHover,
  onRun,
}: {
  id: string;
  commands: Command[];
  current: number;
  onHover: (i: number) => void;
  onRun: (c: Command) => void;
}) {
  return (
    <>
      <ul id={id} role="listbox" aria-label="Commands" className="palette-list">
        {commands.map((c, i) => (
          <li
            key={c.key}
            id={optionId(id, i)}
            role="option"
            aria-selected={i === current}
            className="palette-item"
            onMouseMove={() => onHover(i)}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => onRun(c)}
          >
            <span>{c.label}</span>
            <span className="palette-group">{c.group}</span>
          </li>
        ))}
      </ul>
      {commands.length === 0 ? (
        <p className="muted small" role="status">
          Nothing matches. Ids start with med_, file_, task_, auto_, evt_, we_, whd_, key_ or prj_.
        </p>
      ) : null}
    </>
  );
}
