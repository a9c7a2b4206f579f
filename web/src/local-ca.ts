import { useEffect, useState } from 'react';
import { api, ok } from './api/client';

// The file of the server's local certificate authority (GET /auth/status `local_ca.file`), which
// every command the app shows passes to curl (`--cacert`) so it runs as copied; null when the
// server has a certificate of its own. Asked once per page load.

let loading: Promise<string | null> | undefined;

export function loadCaFile(): Promise<string | null> {
  loading ??= api.GET('/auth/status').then(
    (r) => ok(r).data.local_ca?.file ?? null,
    () => null,
  );
  return loading;
}

/** The CA file once known (undefined before). */
export function useCaFile(): string | null | undefined {
  const [file, setFile] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void loadCaFile().then((f) => live && setFile(f));
    return () => {
      live = false;
    };
  }, []);
  return file;
}

/** `curl` with the CA when there is one. */
export const curlWithCa = (caFile: string | null | undefined) => (caFile ? `curl --cacert ${caFile}` : 'curl');
