import { CopyButton } from './copy-button';

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
