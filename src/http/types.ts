import 'fastify';
import type { AuthContext } from '../services/keys.js';

export type { AuthContext };

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
    apiVersion?: string;
  }
  interface FastifyContextConfig {
    /** Not a versioned API resource (health, file delivery): Accept-Version is ignored. */
    unversioned?: boolean;
  }
}
