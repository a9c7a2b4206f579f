import { useCallback, useEffect, useRef, useState } from 'react';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads data with `load` when `key` changes (and on reload()); the latest answer wins. With
 * `refreshMs`, loads again on that interval (live pages) without showing the skeleton again.
 */
export function useLoad<T>(load: () => Promise<T>, key: string, refreshMs?: number): Loaded<T> {
  const [tick, setTick] = useState(0);
  const [result, setResult] = useState<{ key: string; data: T | undefined; error: unknown } | null>(null);
  const loadRef = useRef(load);
  useEffect(() => {
    loadRef.current = load;
  });
  useEffect(() => {
    let live = true;
    loadRef.current().then(
      (data) => {
        if (live) setResult({ key, data, error: null });
      },
      (error: unknown) => {
        if (live) setResult((r) => ({ key, data: r?.key === key ? r.data : undefined, error }));
      },
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  useEffect(() => {
    if (!refreshMs) return;
    const t = setInterval(() => setTick((n) => n + 1), refreshMs);
    return () => clearInterval(t);
  }, [refreshMs]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  const current = result?.key === key ? result : null;
  return { data: current?.data, error: current?.error ?? null, loading: current === null, reload };
}
