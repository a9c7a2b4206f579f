import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runProcess } from '../../src/media/process-runner.js';
import { setProcessingNice } from '../../src/media/processing-priority.js';
import { loadSharp } from '../../src/media/sharp-lib.js';

/** The nice value of a thread of this process (field 19 of its stat line). */
function threadNice(tid: string): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

const threads = () =>
  readdirSync('/proc/self/task').map((tid) => ({
    tid,
    name: readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim(),
  }));

describe('media work runs at MEDIAD_PROCESSING_NICE', { skip: process.platform !== 'linux' }, () => {
  it("renices FFmpeg's children and libvips' workers, and leaves the other threads alone", async () => {
    setProcessingNice(7);
    try {
      // A child's own children inherit its value: the shell starts `cut` after the renice.
      const r = await runProcess('sh', ['-c', 'sleep 0.3; cut -d" " -f19 /proc/self/stat'], { timeoutMs: 10_000 });
      assert.equal(r.stdout.toString().trim(), '7');

      const sharp = await loadSharp();
      const image = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#808080' } })
        .jpeg()
        .toBuffer();
      await sharp(image).resize({ width: 300 }).webp().toBuffer();
      const workers = threads().filter((t) => t.name.startsWith('libvips'));
      assert.ok(workers.length > 0, 'libvips started its workers');
      // The next image operation a second later looks again and renices the workers it finds.
      await new Promise((r) => setTimeout(r, 1100));
      await loadSharp();
      for (const w of workers) assert.equal(threadNice(w.tid), 7, `${w.name} ${w.tid}`);
      assert.equal(threadNice(String(process.pid)), 0, 'the main thread keeps its priority');
      for (const t of threads().filter((t) => !t.name.startsWith('libvips')))
        assert.equal(threadNice(t.tid), 0, `${t.name} ${t.tid}`);
    } finally {
      setProcessingNice(0);
    }
  });

  it('changes nothing with 0', async () => {
    const r = await runProcess('sh', ['-c', 'cut -d" " -f19 /proc/self/stat'], { timeoutMs: 10_000 });
    assert.equal(r.stdout.toString().trim(), '0');
  });
});
