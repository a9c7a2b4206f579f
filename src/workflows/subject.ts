import { toFileObject, toMediaObject, type FileRow, type MediaRow } from '../services/representations.js';
import type { ConditionSubject } from './conditions.js';

/** What conditions are checked against: the media and the file as the API shows them. */
export function conditionSubject(publicUrl: string, media: MediaRow | undefined, file: FileRow): ConditionSubject {
  return {
    media: media ? (toMediaObject(publicUrl, media, []) as unknown as Record<string, unknown>) : null,
    file: toFileObject(publicUrl, file) as unknown as Record<string, unknown>,
  };
}
