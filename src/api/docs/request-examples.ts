// An example of every JSON request body /openapi.json documents, by operation ("METHOD /path" as
// the document writes paths). test/api/openapi-bodies.test.ts holds each to its body's schema,
// and a body without an example fails it. POST /tasks has one per kind (task-bodies.ts).

import { EXAMPLE_MEDIA_ID } from './task-bodies.js';

type Json = Record<string, unknown>;

const PASSWORD = 'correct horse battery staple';
const WORKFLOW = [
  {
    kind: 'conditions',
    conditions: [{ prop: 'kind', value: 'video' }],
    next: [
      { kind: 'thumbnails', count: 20 },
      { kind: 'image', width: 640, format: 'webp', ref: 'poster' },
    ],
  },
];

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  'POST /auth/setup': {
    token: 'the token after #token= in the setup link the log shows',
    email: 'owner@example.com',
    name: 'Olivia Owner',
    password: PASSWORD,
    org: 'Acme',
    project: 'Website',
  },
  'POST /auth/sign-in': { email: 'owner@example.com', password: PASSWORD },
  'PATCH /account': { name: 'Olivia Owner', theme: 'dark' },
  'POST /account/password': { current_password: PASSWORD, new_password: 'another long passphrase' },
  'POST /orgs': { name: 'Acme Studio' },
  'POST /orgs/{id}/projects': { name: 'Podcasts' },
  'POST /auth/accept-invitation': {
    token: 'the token after #token= in the invitation link',
    name: 'Vera Viewer',
    password: PASSWORD,
  },
  'PATCH /orgs/{id}': { name: 'Acme Media' },
  'DELETE /orgs/{id}': { confirm: 'Acme Media' },
  'PATCH /orgs/{id}/projects/{project_id}': { name: 'Podcasts (archive)' },
  'DELETE /orgs/{id}/projects/{project_id}': { confirm: 'Podcasts (archive)' },
  'PATCH /orgs/{id}/members/{user_id}': { role: 'member' },
  'POST /orgs/{id}/invitations': { email: 'vera@example.com', role: 'viewer' },
  'POST /files': { url: 'https://media.example.com/talk.mp4', folder: 'talks', metadata: { speaker: 'Ada' } },
  'PATCH /files/{id}': { folder: 'talks/2026', filename: 'keynote.mp4', metadata: { speaker: 'Ada' } },
  'POST /media': { title: 'Keynote', alt: 'Ada on stage', metadata: { event: 'conf-2026' } },
  'PATCH /media/{id}': { title: 'Keynote (edited)', metadata: { event: 'conf-2026', published: true } },
  'POST /signatures': { filename: 'clip.mp4', folder: 'uploads', method: 'put', expiry: 4102444800 },
  // Resumable uploads (issue 25).
  'POST /uploads': { expires_in: 3600 },
  'POST /tasks/retry': { kind: 'video' },
  'PATCH /project': { require_signed_delivery: true },
  'POST /automations': {
    name: 'Previews for videos',
    trigger: { kind: 'event', event: 'media.created' },
    workflow: WORKFLOW,
    status: 'active',
  },
  'PATCH /automations/{id}': { status: 'paused' },
  'PUT /automations/{id}': {
    name: 'Previews for videos',
    trigger: { kind: 'event', event: 'media.created' },
    workflow: WORKFLOW,
  },
  'POST /automations/{id}/dry-run': { media_id: EXAMPLE_MEDIA_ID },
  'POST /webhooks': {
    url: 'https://hooks.example.com/mediad',
    events: ['task.completed', 'task.failed'],
    description: 'Build previews',
  },
  'PATCH /webhooks/{id}': { enabled: true },
  'POST /keys': { name: 'CI uploads', scopes: ['files:write', 'tasks:write'], expires: '2027-01-01T00:00:00Z' },
  'PATCH /keys/{id}': { paused: true },
  // Image URLs (issue 24)
  'PATCH /project/image-url-settings': { allow_unsigned_presets: true },
  'POST /image-presets': { name: 'thumb', options: { width: 320, height: 180, fit: 'cover', format: 'auto' } },
  'PUT /image-presets/{name}': { options: { width: 640, height: 360, fit: 'cover', format: 'auto' } },
  'POST /image-urls': {
    file_id: 'file_4dXxZb2QyHh1W7n9',
    options: { width: 400, fit: 'inside', format: 'webp' },
    widths: [400, 800],
  },
};

/** Puts each example beside its body's schema; returns the bodies that have none. */
export function documentRequestExamples(doc: Json): string[] {
  const missing: string[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const content = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      const json = content?.['application/json'];
      if (!json || json.examples) continue;
      const key = `${method.toUpperCase()} ${path}`;
      if (key in REQUEST_EXAMPLES) json.example = REQUEST_EXAMPLES[key];
      else missing.push(key);
    }
  }
  return missing;
}
