import type { Config } from './config.js';

// Fault injection for the crash tests (test/api/crash-orphans.test.ts): at a named step boundary
// the process kills itself with SIGKILL, as a power cut or the OOM killer would, when
// MEDIAD_CRASH_AT names that step. Each point is a place where the database and the blob store
// have been changed separately and a crash must not leave bytes that no row will ever reference.

export type CrashPoint =
  /** The blob journal says a blob is about to be written; no bytes yet. */
  | 'blob.put.intended'
  /** The bytes are stored; the files row is not committed yet. */
  | 'blob.put.written'
  /** The files row is committed; nothing left to do. */
  | 'blob.put.committed'
  /** The files row is deleted and the journal says its blob is to go; the bytes are still there. */
  | 'blob.delete.committed'
  /** The bytes are gone; the journal entry is not cleared yet. */
  | 'blob.delete.removed'
  /** A package's output row is committed as processing (playable early); its task is still writing it. */
  | 'package.playable';

export function crashPoint(config: Pick<Config, 'crashAt'>, point: CrashPoint): void {
  if (config.crashAt === point) process.kill(process.pid, 'SIGKILL');
}
