import type { ReactNode } from 'react';
import { Button } from './button';

// A dialog's answer that is shown only once (a new API key, an invitation link), and its Done button.

export function ShownOnce({ children, onDone }: { children: ReactNode; onDone: () => void }) {
  return (
    <div className="stack">
      {children}
      <div className="dialog-actions">
        <Button tone="primary" onClick={onDone}>
          Done
        </Button>
      </div>
    </div>
  );
}
