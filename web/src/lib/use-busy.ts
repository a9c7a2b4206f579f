import { useCallback, useState, type FormEvent } from 'react';

// Work a form or a button starts: `busy` while it runs (the button says so), and what it threw
// (shown with <ErrorBanner error={error} />), cleared when it starts again.

export function useBusy() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  /** A form's onSubmit: the browser does not load a page; `work` runs instead. */
  const submit = useCallback(
    (work: () => Promise<void>) => (e: FormEvent) => {
      e.preventDefault();
      void run(work);
    },
    [run],
  );
  return { busy, error, setError, run, submit };
}
