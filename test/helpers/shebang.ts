import { readFileSync } from 'node:fs';

/** What a script's `#!/usr/bin/env -S NAME=value … node flags…` line sets: the environment before node, and node's flags. */
export interface Shebang {
  /** The line itself. */
  line: string;
  env: Record<string, string>;
  nodeFlags: string[];
}

/** The #! line of `script` (the mediad command: src/cli.ts, and dist/src/cli.js once built), read apart. */
export function readShebang(script: string): Shebang {
  const first = readFileSync(script, 'utf8').split('\n', 1)[0] ?? '';
  const words = first
    .replace(/^#!\S*\s*(-S\s+)?/, '')
    .split(/\s+/)
    .filter(Boolean);
  const node = words.findIndex((w) => w === 'node' || w.endsWith('/node'));
  const env = Object.fromEntries(
    words.slice(0, Math.max(node, 0)).flatMap((w) => {
      const eq = w.indexOf('=');
      return eq > 0 ? [[w.slice(0, eq), w.slice(eq + 1)]] : [];
    }),
  );
  return { line: first, env, nodeFlags: words.slice(node + 1) };
}
