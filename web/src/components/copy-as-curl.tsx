import { curlWithCa, useCaFile } from '../lib/local-ca';
import { CopyButton } from './copy-button';

/** The curl command for an object's GET, with the key as a placeholder (never a secret) and the local CA. */
export function curlFor(path: string, caFile: string | null | undefined): string {
  return `${curlWithCa(caFile)} -H "Authorization: Bearer $MEDIAD_API_KEY" ${window.location.origin}${path}`;
}

export function CopyAsCurl({ path }: { path: string }) {
  const caFile = useCaFile();
  // Until the CA file is known the command would lack --cacert: nothing to copy yet.
  if (caFile === undefined)
    return (
      <button type="button" className="btn btn-small" disabled>
        Copy as curl
      </button>
    );
  return <CopyButton value={curlFor(path, caFile)} label="Copy as curl" />;
}
