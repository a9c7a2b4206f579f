import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import type { TasksTable } from '../db/schema.js';
import { transact } from '../db/transact.js';
import type { KindInput, KindResult, ProducedFile } from '../kinds/define.js';
import { complete, markPlayable, wait } from '../queue/task-state.js';
import { stageLocalFile, stageOutputs, type OutputFile, type Staged } from '../services/media/file-store.js';
import { GrowingPackage } from '../services/media/growing-package.js';
import { annotateMedia } from '../services/media/intelligence.js';
import { parseChain } from '../shapes/events.js';
import type { FileObject } from '../shapes/files.js';
import { fileSummary, type TaskTarget } from '../shapes/tasks.js';
import { advance, startSteps } from '../workflows/runner.js';
import type { TaskTimeline } from './timeline.js';

/**
 * Ends a task with what its kind produced, in one transaction opened here: the output files'
 * rows (their blobs staged first), the summary an intelligence kind writes into the media's
 * metadata, the task's completion with its event and webhook, and the next workflow steps. A failed transaction leaves no row and abandons the staged blobs; a lost
 * lease (the task was cancelled or taken over meanwhile) rolls everything back.
 */
export async function applyResult(
  deps: Deps,
  task: TasksTable,
  target: TaskTarget,
  input: KindInput | null,
  result: KindResult,
  growing?: GrowingPackage | null,
  timeline?: TaskTimeline,
): Promise<void> {
  const now = () => iso(deps.clock.now());
  if ('steps' in result) {
    if (!input) throw new Error('a workflow runs on an input file');
    await transact(deps.db, async (trx) => {
      const parent = await wait(trx, task, now());
      await startSteps(trx, parent, result.steps, input.file.id, parent.input, now());
    });
    timeline?.mark('commit');
    return;
  }
  if ('output' in result) {
    await transact(deps.db, async (trx) =>
      advance(
        trx,
        await complete(
          trx,
          task,
          { outputFileId: null, output: result.output, results: result.results },
          now(),
          currentRow(task, input, growing),
        ),
        now(),
      ),
    );
    timeline?.mark('commit');
    return;
  }
  const staged =
    growing?.started && 'files' in result
      ? await growing.stage(outputFile(result.files, input, target))
      : await stage(deps, task, target, input, result);
  timeline?.mark('store');
  const annotate = 'annotate' in result ? result.annotate : undefined;
  const results = 'files' in result ? result.results : undefined;
  try {
    await transact(deps.db, async (trx) => {
      const [output] = await staged.insert(trx);
      if (!output) throw new Error('a task stored no output file');
      if (annotate) {
        const scope = { projectId: task.project_id, chain: parseChain(task.chain) };
        await annotateMedia(deps, trx, scope, output.media_id, annotate, now());
      }
      await advance(
        trx,
        await complete(
          trx,
          task,
          { outputFileId: output.id, output: fileSummary(output), results },
          now(),
          currentRow(task, input, growing),
        ),
        now(),
      );
    });
    staged.committed();
    timeline?.mark('commit');
  } catch (err) {
    throw await staged.abandon(err);
  }
}

/**
 * The claimed row is still the task's row unless this attempt changed it: a fetched input attached
 * to it (attachInput: the input's file is not the one the row named) or a package stored while it
 * was made (markPlayable). complete() makes the completed row from it without reading it back.
 */
function currentRow(
  task: TasksTable,
  input: KindInput | null,
  growing?: GrowingPackage | null,
): TasksTable | undefined {
  if (growing?.started) return undefined;
  if (input && input.file.id !== task.input_file_id) return undefined;
  return task;
}

/**
 * The writer of a package stored while its task makes it (adaptive_video): the output goes where
 * the task's output goes, and its processing row becomes the task's output when it is committed.
 */
export function packageWriterFor(
  deps: Deps,
  task: TasksTable,
  target: TaskTarget,
  input: KindInput | null,
): GrowingPackage | null {
  if (!input) return null;
  const scope = { projectId: task.project_id, chain: parseChain(task.chain) };
  return new GrowingPackage(
    deps,
    scope,
    { mediaId: input.file.media_id, folder: target.folder ?? input.file.folder, filename: target.filename },
    (trx, file) => markPlayable(trx, task, { outputFileId: file.id, output: fileSummary(file) }, iso(deps.clock.now())),
  );
}

/** The one output of a growing package, as stageOutputs would store it. */
function outputFile(files: ProducedFile[], input: KindInput | null, target: TaskTarget): OutputFile {
  const [f] = files;
  if (!f || files.length > 1 || !input) throw new Error('a growing package is the task’s one output');
  return {
    path: f.path,
    facts: f,
    probe: f.probe,
    folder: target.folder ?? input.file.folder,
    filename: target.filename ?? f.filename,
    ref: f.ref !== undefined ? f.ref : (target.ref ?? null),
    metadata: f.metadata,
    package: f.package,
  };
}

/** The files to store: a new file (and media) for an ingest, else outputs in the input's media. */
async function stage(
  deps: Deps,
  task: TasksTable,
  target: TaskTarget,
  input: KindInput | null,
  result: Extract<KindResult, { files: unknown } | { ingested: unknown }>,
): Promise<Staged<FileObject[]>> {
  const scope = { projectId: task.project_id, chain: parseChain(task.chain) };
  if ('ingested' in result) {
    const { path, ...file } = result.ingested;
    const one = await stageLocalFile(deps, scope, path, { ...target, ...file });
    return { ...one, insert: async (trx) => [await one.insert(trx)] };
  }
  if (!input) throw new Error('a kind that produces files runs on an input file');
  const folder = target.folder ?? input.file.folder;
  return stageOutputs(
    deps,
    scope,
    input.file.media_id,
    result.files.map((f, i) => ({
      path: f.path,
      facts: f,
      probe: f.probe,
      folder,
      // files[0] is the task's output: the task's filename and ref; further files name their own.
      filename: i === 0 ? (target.filename ?? f.filename) : f.filename,
      ref: f.ref !== undefined ? f.ref : i === 0 ? (target.ref ?? null) : null,
      metadata: f.metadata,
      package: f.package,
    })),
  );
}
