import type { ReactNode } from 'react';

// The signed-out pages' frame (setup, sign-in, invitation): one card in the middle of the screen.

export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main id="main" className="center-page">
      <div className="card auth-card">
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
