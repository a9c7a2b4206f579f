import type { Deps } from '../../deps.js';

const BATCH = 500;

export interface ReconcileReport {
  /** Blobs under projects/ looked at. */
  scanned: number;
  /** Unreferenced and old enough: deleted (or, in a dry run, would be). */
  orphans: string[];
  /** Unreferenced but younger than the threshold: possibly a write in progress, kept. */
  recent: number;
}

/**
 * A full reconciliation of the blob store with the files table, for stores that hold orphans
 * from before the blob journal existed, or whose journal was lost: every blob under projects/
 * that no files row and no journal entry references, and that is older than `olderThanMs`
 * (a write in progress is younger), is deleted. A blob a row references is never deleted.
 */
export async function reconcileBlobs(
  deps: Pick<Deps, 'db' | 'blobs' | 'clock'>,
  opts: { dryRun: boolean; olderThanMs: number },
): Promise<ReconcileReport> {
  const report: ReconcileReport = { scanned: 0, orphans: [], recent: 0 };
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const keys = batch;
    batch = [];
    const known = new Set([
      ...(await deps.db.selectFrom('files').select('blob_key').where('blob_key', 'in', keys).execute()).map(
        (r) => r.blob_key,
      ),
      ...(await deps.db.selectFrom('blob_journal').select('blob_key').where('blob_key', 'in', keys).execute()).map(
        (r) => r.blob_key,
      ),
    ]);
    for (const key of keys) {
      if (known.has(key)) continue;
      const stat = await deps.blobs.stat(key);
      if (!stat) continue;
      if (stat.modified.getTime() + opts.olderThanMs > deps.clock.now().getTime()) {
        report.recent++;
        continue;
      }
      // Checked once more right before deleting: a row may have committed since the batch was read.
      if (await deps.db.selectFrom('files').select('id').where('blob_key', '=', key).executeTakeFirst()) continue;
      report.orphans.push(key);
      if (!opts.dryRun) await deps.blobs.delete(key);
    }
  };
  for await (const key of deps.blobs.list('projects/')) {
    report.scanned++;
    batch.push(key);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  return report;
}
