import { Type } from 'typebox';
import { Metadata, Nullable } from '../http/schemas.js';

const Ref = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' });
export const FolderField = Type.String({ maxLength: 255 });
export const FilenameField = Type.String({ minLength: 1, maxLength: 255 });

const fileFields = {
  id: Type.String(),
  object: Type.Literal('source'),
  kind: Type.String(),
  format: Type.Optional(Type.String()),
  type: Type.String(),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
  duration: Type.Optional(Type.Number()),
  filesize: Type.Integer(),
  folder: Type.String(),
  filename: Type.String(),
  url: Type.String(),
  dash_url: Type.Optional(
    Type.String({ description: 'adaptive_video: the DASH manifest of the package whose HLS master playlist is `url`' }),
  ),
  ref: Type.Optional(Type.String()),
  created: Type.String(),
  updated: Type.String(),
};

export const FileSchema = Type.Object({
  ...fileFields,
  media_id: Type.String(),
  metadata: Metadata,
  status: Type.String(),
});
/** A file inside a media: without media_id and metadata (SPEC 2.3), with its status (the SDKs require it). */
export const EmbeddedFileSchema = Type.Object({ ...fileFields, status: Type.String() });

export const CreateFileBody = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: 4096 }),
    media_id: Type.Optional(Type.String({ maxLength: 64 })),
    folder: Type.Optional(FolderField),
    filename: Type.Optional(FilenameField),
    ref: Type.Optional(Ref),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const PatchFileBody = Type.Object(
  {
    folder: Type.Optional(FolderField),
    filename: Type.Optional(FilenameField),
    ref: Type.Optional(Nullable(Ref)),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const DeletedSchema = Type.Object({
  id: Type.String(),
  object: Type.String(),
  deleted: Type.Boolean(),
  message: Type.String(),
});
