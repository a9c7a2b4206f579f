import type { paths } from './schema';

// Names for the API's objects, taken from schema.d.ts (so they follow the API).

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The `data` of an operation's answer with status S. */
export type Data<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends {
  responses: infer R;
}
  ? S extends keyof R
    ? JsonOf<R[S]> extends { data: infer D }
      ? D
      : never
    : never
  : never;
/** The JSON body an operation takes. */
export type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export type SessionInfo = Data<'/auth/session', 'get'>;
export type User = SessionInfo['user'];
export type Membership = SessionInfo['memberships'][number];
export type Role = Membership['role'];
export type Theme = User['theme'];
export type ApiKey = Data<'/keys', 'get'>[number];
export type Project = Data<'/project', 'get'>;
export type ProjectStats = Data<'/project/stats', 'get'>;
export type Task = Data<'/tasks/{id}', 'get'>;
export type AccountSession = Data<'/account/sessions', 'get'>[number];
