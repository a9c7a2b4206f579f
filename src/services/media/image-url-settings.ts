import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { forgetSettings, imageUrlSettings } from './image-url-keys.js';
import { budgetOf, evictOverBudget, projectCacheUsage } from './image-url-budget.js';

// A project's image-URL settings (GET/PATCH /project/image-url-settings, docs/image-urls.md):
// whether unsigned preset URLs are served, and its own cache budget with what it uses now.

type SettingsDeps = Pick<Deps, 'db' | 'blobs' | 'clock' | 'config' | 'log' | 'secrets'>;

export interface ImageUrlSettingsObject {
  object: 'image_url_settings';
  allow_unsigned_presets: boolean;
  /** The project's own cache budget in bytes; null: the server's default. */
  cache_bytes: number | null;
  cache: {
    /** The budget in force: cache_bytes, else the default, never above max_bytes. */
    budget_bytes: number;
    /** The server's default for a project (MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES). */
    default_bytes: number;
    /** The whole cache's budget (MEDIAD_IMAGE_URL_CACHE_BYTES): no project's budget is above it. */
    max_bytes: number;
    /** What the project's cached results take now. */
    used_bytes: number;
    results: number;
  };
}

export interface ImageUrlSettingsPatch {
  allow_unsigned_presets?: boolean;
  /** An integer ≥ 0 (above the whole cache's budget: lowered to it), or null for the server's default. */
  cache_bytes?: number | null;
}

export async function getImageUrlSettings(deps: SettingsDeps, projectId: string): Promise<ImageUrlSettingsObject> {
  const row = await imageUrlSettings(deps, projectId);
  const usage = await projectCacheUsage(deps, projectId);
  const { cacheBytes, projectCacheBytes } = deps.config.imageUrls;
  return {
    object: 'image_url_settings',
    allow_unsigned_presets: row.allow_unsigned_presets === 1,
    cache_bytes: row.cache_bytes,
    cache: {
      budget_bytes: budgetOf(deps.config, row.cache_bytes),
      default_bytes: projectCacheBytes,
      max_bytes: cacheBytes,
      used_bytes: usage.bytes,
      results: usage.results,
    },
  };
}

/** Changes what the patch names; a lower budget takes effect at once (the project's least recently used results go). */
export async function updateImageUrlSettings(
  deps: SettingsDeps,
  projectId: string,
  patch: ImageUrlSettingsPatch,
): Promise<ImageUrlSettingsObject> {
  await imageUrlSettings(deps, projectId);
  // Clamped, not refused: no project may keep more than the whole cache holds.
  const cacheBytes =
    patch.cache_bytes === undefined || patch.cache_bytes === null
      ? patch.cache_bytes
      : Math.min(patch.cache_bytes, deps.config.imageUrls.cacheBytes);
  if (patch.allow_unsigned_presets !== undefined || cacheBytes !== undefined)
    await deps.db
      .updateTable('image_url_settings')
      .set({
        ...(patch.allow_unsigned_presets !== undefined
          ? { allow_unsigned_presets: patch.allow_unsigned_presets ? 1 : 0 }
          : {}),
        ...(cacheBytes !== undefined ? { cache_bytes: cacheBytes } : {}),
        updated: iso(deps.clock.now()),
      })
      .where('project_id', '=', projectId)
      .execute();
  forgetSettings(deps, projectId);
  if (cacheBytes !== undefined) {
    // Counted afresh (other processes may have stored since this one last counted), then trimmed.
    await projectCacheUsage(deps, projectId);
    await evictOverBudget(deps, projectId, budgetOf(deps.config, cacheBytes));
  }
  return getImageUrlSettings(deps, projectId);
}
