import { useEffect, useState } from 'react';
import { useLoad } from '../../lib/use-load';
import { POLL_MS } from './tasks-model';

// Live pages poll only while they are seen: a hidden tab costs the server nothing.

/** Whether the tab is visible: live views stop polling while it is hidden. */
function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState !== 'hidden');
  useEffect(() => {
    const update = () => setVisible(document.visibilityState !== 'hidden');
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, []);
  return visible;
}

/** A load that repeats every `ms` while the tab is visible (and at once when it comes back). */
export function useLiveLoad<T>(load: () => Promise<T>, key: string, live: boolean) {
  const visible = usePageVisible();
  const loaded = useLoad(load, key, visible && live ? POLL_MS : undefined);
  const { reload } = loaded;
  const [wasVisible, setWasVisible] = useState(visible);
  if (visible !== wasVisible) {
    setWasVisible(visible);
    if (visible) reload();
  }
  return loaded;
}
