// Progress as the task layer wants it: integer percent, strictly increasing, at most a few
// updates a second, 100 only when the work is done; a throwing callback never breaks the work.

export type ProgressFn = (percent: number) => void;

export interface ProgressReporter {
  /** Fraction 0–1 of the work done; reported as at most 99 until done(). */
  report(fraction: number): void;
  done(): void;
}

export function progressReporter(
  fn: ProgressFn | undefined,
  intervalMs = 250,
  now: () => number = Date.now,
): ProgressReporter {
  let last = -1;
  let lastAt = -Infinity;
  const emit = (p: number): void => {
    last = p;
    lastAt = now();
    try {
      fn?.(p);
    } catch {
      // best-effort by design
    }
  };
  return {
    report(fraction) {
      if (!fn || !Number.isFinite(fraction)) return;
      const p = Math.min(99, Math.max(0, Math.floor(fraction * 100)));
      if (p > last && now() - lastAt >= intervalMs) emit(p);
    },
    done() {
      if (fn && last < 100) emit(100);
    },
  };
}

/** Maps a sub-step's 0–100 onto [from, to] of a parent reporter. */
export function subProgress(parent: ProgressReporter, from: number, to: number): ProgressFn {
  return (percent) => parent.report(from + ((to - from) * percent) / 100);
}
