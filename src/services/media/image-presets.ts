import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { ImagePresetsTable } from '../../db/schema.js';
import {
  checkImageUrlOptions,
  formatImageUrlOptions,
  parseImageUrlOptions,
  PRESET_NAME,
  type ImageUrlOptions,
} from './image-url-options.js';

// Named presets of image URLs (`preset:thumb`): a project's fixed option sets. With
// allow_unsigned_presets, `/img/{project}/_/preset:thumb/{file}` needs no signature.

export interface ImagePresetObject {
  object: 'image_preset';
  name: string;
  options: Record<string, string | number>;
  /** The options as an image URL writes them. */
  path: string;
  created: string;
  updated: string;
}

function toObject(row: ImagePresetsTable): ImagePresetObject {
  const parsed = parseImageUrlOptions(row.options);
  const options: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string' || typeof v === 'number') options[k] = v;
  return {
    object: 'image_preset',
    name: row.name,
    options,
    path: row.options,
    created: row.created,
    updated: row.updated,
  };
}

export async function listPresets(deps: Pick<Deps, 'db'>, projectId: string): Promise<ImagePresetObject[]> {
  const rows = await deps.db
    .selectFrom('image_presets')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('name')
    .execute();
  return rows.map(toObject);
}

async function presetRow(deps: Pick<Deps, 'db'>, projectId: string, name: string) {
  return deps.db
    .selectFrom('image_presets')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function getPreset(deps: Pick<Deps, 'db'>, projectId: string, name: string): Promise<ImagePresetObject> {
  const row = await presetRow(deps, projectId, name);
  if (!row) throw new AppError('not_found', `no image preset named ${name} in this project`);
  return toObject(row);
}

/** A preset's options for an image URL; an unknown name is a 400 naming `preset`. */
export async function getPresetOptions(
  deps: Pick<Deps, 'db'>,
  projectId: string,
  name: string,
): Promise<ImageUrlOptions> {
  const row = await presetRow(deps, projectId, name);
  if (!row)
    throw new AppError('validation_failed', `image option preset: no preset named ${name} in this project`, {
      details: [{ field: 'preset', message: `no preset named ${name}` }],
    });
  return parseImageUrlOptions(row.options);
}

function checkedOptions(raw: Record<string, unknown>): string {
  const { options, details } = checkImageUrlOptions(raw);
  if (options.preset !== undefined)
    details.push({ field: 'options.preset', message: 'a preset cannot name another preset' });
  if (details.length > 0)
    throw new AppError('validation_failed', 'the preset options are not valid image URL options', {
      details: details.map((d) => ({
        field: d.field.startsWith('options.') ? d.field : `options.${d.field}`,
        message: d.message,
      })),
    });
  return formatImageUrlOptions(options);
}

/** Creates or replaces the preset `name`; answers it and whether it is new. */
export async function putPreset(
  deps: Pick<Deps, 'db' | 'clock'>,
  projectId: string,
  name: string,
  raw: Record<string, unknown>,
): Promise<{ preset: ImagePresetObject; created: boolean }> {
  if (!PRESET_NAME.test(name))
    throw new AppError(
      'validation_failed',
      'a preset name is 1–64 of a-z, 0-9, - and _ (starting with a letter or digit)',
      {
        details: [{ field: 'name', message: 'must match ^[a-z0-9][a-z0-9_-]{0,63}$' }],
      },
    );
  const options = checkedOptions(raw);
  const now = iso(deps.clock.now());
  const existing = await presetRow(deps, projectId, name);
  if (existing)
    await deps.db
      .updateTable('image_presets')
      .set({ options, updated: now })
      .where('project_id', '=', projectId)
      .where('name', '=', name)
      .execute();
  else
    await deps.db
      .insertInto('image_presets')
      .values({ project_id: projectId, name, options, created: now, updated: now })
      .execute();
  return { preset: await getPreset(deps, projectId, name), created: !existing };
}

export async function deletePreset(deps: Pick<Deps, 'db'>, projectId: string, name: string): Promise<void> {
  const res = await deps.db
    .deleteFrom('image_presets')
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (Number(res.numDeletedRows) === 0)
    throw new AppError('not_found', `no image preset named ${name} in this project`);
}
