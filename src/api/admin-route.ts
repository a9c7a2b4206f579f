import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import type { Actor } from '../services/audit.js';
import type { Admin } from '../services/people/org-admin.js';

// The shape of a signed-in administration route (api/admin.ts registers the table of them).

export type App = Parameters<FastifyPluginAsyncTypebox<{ deps: Deps }>>[0];

/** What every signed-in administration route works with. */
export interface AdminContext {
  deps: Deps;
  base: string;
  /** The signed-in user. */
  me(req: FastifyRequest): Admin;
  /** The signed-in user as the audit log records them. */
  actor(req: FastifyRequest): Actor;
  /** The URL of an organisation. */
  org(id: string): string;
  /** Links of one object: itself and its list. */
  one(self: string, parent: string): { self: string; parent: string };
}
export type AdminRoute = (app: App, c: AdminContext) => void;
