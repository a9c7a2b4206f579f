// Applies the saved theme before the page paints (no flash of the wrong theme). A file, not an
// inline script, so the Content-Security-Policy can forbid inline scripts.
(function () {
  var theme = 'system';
  try {
    theme = localStorage.getItem('mediad-theme') || 'system';
  } catch {
    /* storage may be disabled */
  }
  var dark = theme === 'dark' || (theme === 'system' && matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.classList.toggle('dark', dark);
  document.documentElement.style.colorScheme = dark ? 'dark' : 'light';
})();
