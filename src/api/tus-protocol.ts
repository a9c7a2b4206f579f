import { AppError, type ErrorCode } from '../errors.js';

// The tus protocol's constants and error mapping as mediad answers them. Kept apart from
// tus-server.ts so the routes, upload tokens and OPTIONS answer without loading the tus library
// (it is imported on the first upload request).

export const TUS_PATH = '/uploads/tus';
export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = [
  'creation',
  'creation-with-upload',
  'creation-defer-length',
  'termination',
  'expiration',
  'checksum',
];
export const FILE_ID_HEADER = 'Mediad-File-Id';

/** tus's own error answers (status, text) as catalogue codes. */
const TUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'upload_expired',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  460: 'checksum_mismatch',
  501: 'bad_request',
};

export function tusError(status: number, text: string): AppError {
  const code = TUS_CODES[status] ?? (status >= 500 ? 'service_unavailable' : 'bad_request');
  return new AppError(code, `tus: ${text.trim() || `status ${status}`}`, {
    headers: { 'tus-resumable': TUS_VERSION },
  });
}
