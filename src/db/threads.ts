import { Worker } from 'node:worker_threads';

// Built, a thread's entry is the .js beside this file; run from sources by tsx, a worker does not
// inherit tsx's loader, so a bootstrap registers it before importing the .ts entry.
const FROM_SOURCES = import.meta.url.endsWith('.ts');

/** Starts the thread whose entry is `name` (a file of this folder, without extension). */
export function startThread(name: string, workerData: unknown): Worker {
  const entry = new URL(`./${name}${FROM_SOURCES ? '.ts' : '.js'}`, import.meta.url);
  return FROM_SOURCES
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`,
        { eval: true, workerData },
      )
    : new Worker(entry, { workerData });
}
