import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The web application: built into dist/web and served by mediad under /app/ (src/api/web-app.ts).
// Hashed file names under assets/ (served immutable); no inline script, so the CSP can say
// script-src 'self'; nothing is inlined as a data: URL either.
export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  plugins: [react()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
