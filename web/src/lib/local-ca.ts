import { useEffect, useState } from 'react';
import { api, ok } from './api/client';

// The server's local certificate authority (GET /auth/status `local_ca`: the file clients on its
// machine pass, and where to download it), which every command the app shows passes to curl
// (`--cacert`) so it runs as copied; null when the server has a certificate of its own. The
// session's own GET /auth/status seeds it (session.tsx), so pages ask no second time.

export interface LocalCa {
  file: string;
  url: string;
}

let loading: Promise<LocalCa | null> | undefined;

/** What the session's GET /auth/status said. */
export function rememberLocalCa(ca: LocalCa | null | undefined): void {
  loading = Promise.resolve(ca ?? null);
}

export function loadLocalCa(): Promise<LocalCa | null> {
  loading ??= api.GET('/auth/status').then(
    (r) => ok(r).data.local_ca ?? null,
    () => null,
  );
  return loading;
}

/** The local CA once known (undefined before; null: none). */
export function useLocalCa(): LocalCa | null | undefined {
  const [ca, setCa] = useState<LocalCa | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void loadLocalCa().then((c) => live && setCa(c));
    return () => {
      live = false;
    };
  }, []);
  return ca;
}

/** The CA file once known (undefined before; null: none). */
export function useCaFile(): string | null | undefined {
  const ca = useLocalCa();
  return ca === undefined ? undefined : (ca?.file ?? null);
}

/** `curl` with the CA when there is one. */
export const curlWithCa = (caFile: string | null | undefined) => (caFile ? `curl --cacert ${caFile}` : 'curl');
