import type { ReactNode } from 'react';

// The box a table scrolls sideways in when it is wider than the screen (a phone). It takes the
// keyboard focus so that the scrolling works without a mouse too. (No accessible name of its own:
// the table inside is named by its caption.)

export function TableScroll({ children }: { children: ReactNode }) {
  return (
    <div className="table-wrap" tabIndex={0}>
      {children}
    </div>
  );
}
