import type { Body } from '../../lib/api/types';

// What a key may do, as the create dialog offers it: per family none, read or write; and
// its expiry presets.

export type Scope = NonNullable<Body<'/keys', 'post'>['scopes']>[number];

export type Access = 'none' | 'read' | 'write';

export type Family = 'files' | 'tasks' | 'automations' | 'events' | 'webhooks' | 'project' | 'secrets';

export const FAMILIES: { id: Family; label: string }[] = [
  { id: 'files', label: 'Files and media' },
  { id: 'tasks', label: 'Tasks' },
  { id: 'automations', label: 'Automations' },
  { id: 'events', label: 'Events' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'project', label: 'Project settings' },
  { id: 'secrets', label: 'Signing secrets' },
];

export const ACCESS: Access[] = ['none', 'read', 'write'];

const SCOPE_LIST: Scope[] = [
  'full',
  'files:read',
  'files:write',
  'tasks:read',
  'tasks:write',
  'automations:read',
  'automations:write',
  'events:read',
  'events:write',
  'webhooks:read',
  'webhooks:write',
  'project:read',
  'project:write',
  'secrets:read',
  'secrets:write',
];

export function toScope(s: string): Scope | undefined {
  return SCOPE_LIST.find((x) => x === s);
}

export const EXPIRY = [
  { value: 'never', label: 'Never' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
];

/** When a key made now with this expiry preset (days, or "never") expires. */
export function expiresAt(expiry: string): string | null {
  return expiry === 'never' ? null : new Date(Date.now() + Number(expiry) * 86_400_000).toISOString();
}
