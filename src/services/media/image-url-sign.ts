import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { currentKey, imageUrlSettings, signImagePath } from './image-url-keys.js';
import { checkImageUrlOptions, formatImageUrlOptions, type ImageUrlOptions } from './image-url-options.js';
import { IMAGE_URL_PREFIX } from './image-url-paths.js';

// POST /image-urls: a signed image URL for options, for clients that do not sign themselves
// (the web application among them), and a srcset over widths.

export interface ImageUrlObject {
  object: 'image_url';
  file_id: string;
  options: string;
  url: string;
  /** `url 320w, url 640w, …` when widths were given. */
  srcset?: string;
}

export interface ImageUrlRequest {
  file_id: string;
  options?: Record<string, unknown>;
  extension?: string;
  widths?: number[];
}

export async function makeImageUrl(
  deps: Pick<Deps, 'db' | 'clock' | 'secrets' | 'config'>,
  projectId: string,
  req: ImageUrlRequest,
): Promise<ImageUrlObject> {
  const { options, details } = checkImageUrlOptions(req.options ?? {});
  if (details.length > 0)
    throw new AppError('validation_failed', 'the options are not valid image URL options', {
      details: details.map((d) => ({ field: `options.${d.field}`, message: d.message })),
    });
  const file = await deps.db
    .selectFrom('files')
    .select(['id', 'kind'])
    .where('project_id', '=', projectId)
    .where('id', '=', req.file_id)
    .executeTakeFirst();
  if (!file) throw new AppError('not_found', `no file ${req.file_id} in this project`);
  if (file.kind !== 'image' && file.kind !== 'video')
    throw new AppError(
      'unsupported_media_type',
      `image URLs are made from images and videos; this file is ${file.kind}`,
    );
  const key = currentKey(deps, await imageUrlSettings(deps, projectId));
  const ext = req.extension ? `.${req.extension}` : '';
  const urlFor = (o: ImageUrlOptions) => {
    const opts = formatImageUrlOptions(o);
    const signedPath = `/${opts}/${file.id}${ext}`;
    return `${deps.config.publicUrl}${IMAGE_URL_PREFIX}/${projectId}/${signImagePath(key, signedPath)}${signedPath}`;
  };
  const srcset = req.widths?.map((w) => {
    const height =
      options.width !== undefined && options.height !== undefined
        ? Math.max(1, Math.round((options.height * w) / options.width))
        : options.height;
    return `${urlFor({ ...options, width: w, ...(height !== undefined ? { height } : {}) })} ${w}w`;
  });
  return {
    object: 'image_url',
    file_id: file.id,
    options: formatImageUrlOptions(options),
    url: urlFor(options),
    ...(srcset ? { srcset: srcset.join(', ') } : {}),
  };
}
