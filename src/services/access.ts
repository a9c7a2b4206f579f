import { AppError } from '../errors.js';
import type { Role } from '../db/schema.js';
import type { ApiVersion } from '../versions.js';

// Who may do what. A request acts on one project, as a principal: an API key of that project
// (with its scopes) or a signed-in user (with their role in the project's organisation). Every
// operation belongs to a family of resources and reads or writes it.

export const FAMILIES = [
  'files',
  'tasks',
  'automations',
  'events',
  'webhooks',
  'project',
  'secrets',
  'keys',
  'queue',
] as const;
export type Family = (typeof FAMILIES)[number];

/**
 * Families only owners and admins (and full-access keys) may use, reading included: keys, and the
 * organisation's queue and workers (GET /queue, GET /workers, pausing a kind).
 */
const ADMIN_FAMILIES: readonly Family[] = ['keys', 'queue'];
/**
 * Signing secrets (the project's task-webhook secret, an endpoint's new secret on rotation): whoever
 * holds one can forge deliveries that receivers verify as genuine. Roles: owners and admins only,
 * reading included; keys: full access or an explicit `secrets:read` / `secrets:write` scope.
 */
const SECRET_FAMILY: Family = 'secrets';

/** What a key may be given: full access, or reading or writing (which includes reading) a family. Keys are managed with full access only. */
export const SCOPES = [
  'full',
  ...FAMILIES.filter((f) => !ADMIN_FAMILIES.includes(f)).flatMap((f) => [`${f}:read`, `${f}:write`]),
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

export type Principal =
  | { type: 'key'; keyId: string; scopes: Scope[] }
  | { type: 'session'; userId: string; sessionId: string; role: Role; csrfToken: string }
  /** A signed URL: it allows exactly the request it was signed for (a PUT upload). */
  | { type: 'signed_url' };

/** Who a request is: its project and organisation, the principal, and the project's default API version. */
export interface AuthContext {
  orgId: string;
  projectId: string;
  apiVersion: ApiVersion;
  principal: Principal;
}

/** A stable id of the principal (rate limits count per key or per user). */
export function principalId(p: Principal): string {
  return p.type === 'key' ? p.keyId : p.type === 'session' ? p.userId : 'signed_url';
}

/** Routes of a family other than their path prefix's (matched exactly, before the prefixes). */
const FAMILY_OF_ROUTE = new Map<string, Family>([
  ['/project/webhook-secret', 'secrets'],
  ['/project/webhook-secret/rotate', 'secrets'],
  ['/webhooks/:id/rotate-secret', 'secrets'],
  // Image URLs (issue 24): the key that signs them is a secret; its prefix and dates are settings.
  ['/project/image-url-key/reveal', 'secrets'],
  ['/project/image-url-key/rotate', 'secrets'],
]);

const FAMILY_OF: [prefix: string, family: Family][] = [
  ['/files', 'files'],
  ['/media', 'files'],
  ['/signatures', 'files'],
  ['/d/', 'files'],
  ['/tasks', 'tasks'],
  ['/automations', 'automations'],
  ['/events', 'events'],
  ['/webhooks', 'webhooks'],
  ['/project', 'project'],
  // The project's request log and usage: read with the project's settings.
  ['/requests', 'project'],
  ['/usage', 'project'],
  ['/keys', 'keys'],
  ['/queue', 'queue'],
  ['/workers', 'queue'],
  // Image URLs (issue 24): signing one reads files; presets are project settings.
  ['/image-urls', 'files'],
  ['/image-presets', 'project'],
  ['/img/', 'files'],
  // Resumable uploads (issue 25): tus at /uploads/tus, upload tokens at POST /uploads.
  ['/uploads', 'files'],
];
// Routes of no family (GET /system) answer every authenticated caller.

/** familyOf's answers by route pattern: the patterns are the routes', a fixed few dozen. */
const familyByRoute = new Map<string, Family | null>();

/** The family of a route (by its path pattern), or null for routes outside the project's resources. */
export function familyOf(routeUrl: string): Family | null {
  let family = familyByRoute.get(routeUrl);
  if (family === undefined) familyByRoute.set(routeUrl, (family = findFamily(routeUrl)));
  return family;
}

function findFamily(routeUrl: string): Family | null {
  return (
    FAMILY_OF_ROUTE.get(routeUrl) ??
    FAMILY_OF.find(
      ([prefix]) =>
        routeUrl === prefix ||
        routeUrl.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`) ||
        routeUrl.startsWith(`${prefix}-`),
    )?.[1] ??
    null
  );
}

/** Roles may: viewers read; members also write, but not keys or project settings; admins and owners everything. */
function roleAllows(role: Role, family: Family, write: boolean): boolean {
  if (role === 'owner' || role === 'admin') return true;
  if (ADMIN_FAMILIES.includes(family) || family === SECRET_FAMILY) return false;
  if (!write) return true;
  return role === 'member' && family !== 'project';
}

function scopeAllows(scopes: Scope[], family: Family, write: boolean): boolean {
  if (scopes.includes('full')) return true;
  if (ADMIN_FAMILIES.includes(family)) return false;
  return scopes.includes(`${family}:write` as Scope) || (!write && scopes.includes(`${family}:read` as Scope));
}

/** Throws 403 when the principal may not do this; `write` is any method but GET and HEAD. */
export function checkAccess(p: Principal, family: Family, write: boolean): void {
  const what = `${write ? 'write' : 'read'} ${family}`;
  if (p.type === 'signed_url') return;
  if (p.type === 'key') {
    if (!scopeAllows(p.scopes, family, write)) {
      throw new AppError(
        'insufficient_scope',
        `this API key may not ${what}: it has the scopes ${p.scopes.join(', ')}; make a key with ${ADMIN_FAMILIES.includes(family) ? 'full' : `${family}:${write ? 'write' : 'read'}`} access`,
      );
    }
  } else if (!roleAllows(p.role, family, write)) {
    throw new AppError(
      'insufficient_role',
      `your role (${p.role}) may not ${what} in this organisation; ask an owner or admin`,
    );
  }
}
