import type { Theme } from './api/types';

// The theme is applied as a class on <html> plus color-scheme; public/theme.js applies the saved
// one before the first paint, and the account's theme (PATCH /account {theme}) is saved here.

const KEY = 'mediad-theme';
const media = () => window.matchMedia('(prefers-color-scheme: dark)');

export function savedTheme(): Theme {
  const t = localStorage.getItem(KEY);
  return t === 'light' || t === 'dark' ? t : 'system';
}

let current: Theme = 'system';

export function applyTheme(theme: Theme): void {
  current = theme;
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // storage disabled: the theme still applies to this page
  }
  const dark = theme === 'dark' || (theme === 'system' && media().matches);
  document.documentElement.classList.toggle('dark', dark);
  document.documentElement.style.colorScheme = dark ? 'dark' : 'light';
}

media().addEventListener('change', () => {
  if (current === 'system') applyTheme('system');
});
