import { api, ok } from '../../lib/api/client';
import { objectPath } from '../../lib/event-types';

// Opening an id: which objects the palette knows, and where each one's page is.

/** Id prefixes (src/ids.ts) the palette can open. */
export const ID = /^(med|file|task|auto|evt|we|whd|key|prj)_[A-Za-z0-9]{16,40}$/;
export const KINDS: Record<string, string> = {
  med: 'media',
  file: 'file',
  task: 'task',
  auto: 'automation',
  evt: 'event',
  we: 'webhook endpoint',
  whd: 'webhook delivery',
  key: 'API key',
  prj: 'project',
};

/** The app path of an object, after reading it through the API (which answers 404 for another project's). */
export async function locate(projectId: string, id: string, projectIds: string[]): Promise<string> {
  const path = { params: { path: { id } } };
  const base = `/p/${projectId}`;
  if (id.startsWith('prj_')) {
    if (!projectIds.includes(id)) throw new Error(`You are not a member of project ${id}.`);
    return `/p/${id}/overview`;
  }
  if (id.startsWith('med_')) ok(await api.GET('/media/{id}', path));
  else if (id.startsWith('task_')) ok(await api.GET('/tasks/{id}', path));
  else if (id.startsWith('auto_')) ok(await api.GET('/automations/{id}', path));
  else if (id.startsWith('evt_')) ok(await api.GET('/events/{id}', path));
  else if (id.startsWith('we_')) ok(await api.GET('/webhooks/{id}', path));
  else if (id.startsWith('file_')) {
    const file = ok(await api.GET('/files/{id}', path)).data;
    return `${base}/media/${file.media_id}?file=${id}`;
  } else if (id.startsWith('key_')) {
    const keys = ok(await api.GET('/keys', { params: { query: { page: 1, limit: 100 } } })).data;
    if (!keys.some((k) => k.id === id)) throw new Error(`No API key ${id} in this project.`);
    return `${base}/keys?key=${id}`;
  } else if (id.startsWith('whd_')) {
    // A delivery is read under its endpoint: look for it under each of the project's endpoints.
    const endpoints = ok(await api.GET('/webhooks', { params: { query: { page: 1, limit: 100 } } })).data;
    for (const e of endpoints) {
      const list = ok(
        await api.GET('/webhooks/{id}/deliveries', { params: { path: { id: e.id }, query: { page: 1, limit: 100 } } }),
      ).data;
      if (list.some((d) => d.id === id)) return `${base}/webhooks/${e.id}?delivery=${id}`;
    }
    throw new Error(`No recent webhook delivery ${id} in this project.`);
  }
  const to = objectPath(projectId, id);
  if (!to) throw new Error(`mediad has no page for ${id}.`);
  return to;
}
