import { toFileObject, toMediaObject, type FileRow, type MediaRow } from '../shapes/files.js';
import type { ConditionSubject } from './conditions.js';

/** What conditions are checked against: the media and the file as the API shows them. */
export function conditionSubject(publicUrl: string, media: MediaRow | undefined, file: FileRow): ConditionSubject {
  return {
    media: media ? toMediaObject(publicUrl, media, []) : null,
    file: toFileObject(publicUrl, file),
  };
}
