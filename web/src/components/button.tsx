import type { ButtonHTMLAttributes } from 'react';

// The app's one button: default, primary or danger; `busy` disables it and says so.

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
