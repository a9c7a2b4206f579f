import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { ProcessError, runProcess, type ProcessFailure } from '../../src/media/process-runner.js';

/** Gone = no such process, or a zombie waiting for init to reap it (it no longer runs). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

async function waitGone(pids: number[], ms = 2000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids.filter((p) => !isGone(p));
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(20);
    alive = alive.filter((p) => !isGone(p));
  }
  return alive;
}

/** Collects the numbers a script prints on stderr (its own and its children's pids). */
function pidCollector(): { pids: number[]; onStderrLine: (line: string) => void } {
  const pids: number[] = [];
  return { pids, onStderrLine: (line) => /^\d+$/.test(line) && pids.push(Number(line)) };
}

async function rejectsWith(p: Promise<unknown>, reason: ProcessFailure): Promise<ProcessError> {
  const err = await p.then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ProcessError, String(err));
  assert.equal(err.reason, reason, err.message);
  return err;
}

// sh prints its pid and both children's pids, then waits on them.
// Sleeps of an hour: a run that waited for them could only end at the test's own time-out, so
// returning at all shows it did not wait (no wall-clock assertion needed).
const TWO_SLEEPS = 'echo $$ >&2; sleep 3600 & echo $! >&2; sleep 3600 & echo $! >&2; wait';
const HANG_GUARD = { timeout: 60_000 };

describe('runProcess', () => {
  it('returns stdout, stderr and the exit code', async () => {
    const res = await runProcess('sh', ['-c', 'printf "a\\0b"; echo warn >&2'], { timeoutMs: 5000 });
    assert.deepEqual(res.stdout, Buffer.from('a\0b'));
    assert.equal(res.stderr, 'warn');
    assert.equal(res.code, 0);
  });

  it('rejects on a non-zero exit with the last stderr lines', async () => {
    const script = 'for i in $(seq 1 50); do echo "line $i" >&2; done; exit 3';
    const err = await rejectsWith(runProcess('sh', ['-c', script], { timeoutMs: 5000 }), 'exit');
    assert.equal(err.exitCode, 3);
    assert.match(err.message, /exited with code 3/);
    assert.match(err.message, /line 50$/);
    assert.ok(!err.stderrTail.includes('line 1\n'), 'only the tail is kept');
  });

  it('kills the whole process group on timeout', HANG_GUARD, async () => {
    const { pids, onStderrLine } = pidCollector();
    const err = await rejectsWith(runProcess('sh', ['-c', TWO_SLEEPS], { timeoutMs: 400, onStderrLine }), 'timeout');
    assert.match(err.message, /timed out after 400 ms/);
    assert.equal(pids.length, 3, 'sh and both sleeps reported their pids');
    assert.deepEqual(await waitGone(pids), [], 'no process of the group survives');
  });

  it('kills the whole process group on abort', HANG_GUARD, async () => {
    const { pids, onStderrLine } = pidCollector();
    const ac = new AbortController();
    const run = runProcess('sh', ['-c', TWO_SLEEPS], { timeoutMs: 30_000, signal: ac.signal, onStderrLine });
    while (pids.length < 3) await sleep(10);
    ac.abort();
    await rejectsWith(run, 'aborted');
    assert.deepEqual(await waitGone(pids), []);
  });

  it('does not start anything when the signal is already aborted', async () => {
    const { pids, onStderrLine } = pidCollector();
    await rejectsWith(
      runProcess('sh', ['-c', 'echo $$ >&2'], { timeoutMs: 5000, signal: AbortSignal.abort(), onStderrLine }),
      'aborted',
    );
    assert.equal(pids.length, 0);
  });

  it('kills children left behind by a process that exits normally', HANG_GUARD, async () => {
    const { pids, onStderrLine } = pidCollector();
    const res = await runProcess('sh', ['-c', 'sleep 3600 & echo $! >&2; exit 0'], {
      timeoutMs: 600_000,
      onStderrLine,
    });
    assert.equal(res.code, 0);
    assert.deepEqual(await waitGone(pids), []);
  });

  it('stops a process that writes more than maxOutputBytes', async () => {
    const err = await rejectsWith(
      runProcess('sh', ['-c', 'yes'], { timeoutMs: 10_000, maxOutputBytes: 100_000 }),
      'output_limit',
    );
    assert.match(err.message, /more than 100000 bytes/);
  });

  it('reports a missing binary as a spawn failure', async () => {
    await rejectsWith(runProcess('/nonexistent/ffmpeg', [], { timeoutMs: 5000 }), 'spawn');
  });

  it('passes every stderr line to onStderrLine, including a final unterminated one', async () => {
    const lines: string[] = [];
    await runProcess('sh', ['-c', 'printf "one\\ntwo\\rthree" >&2'], {
      timeoutMs: 5000,
      onStderrLine: (l) => lines.push(l),
    });
    assert.deepEqual(lines, ['one', 'two', 'three']);
  });
});
