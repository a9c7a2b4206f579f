import 'fastify';

export interface AuthContext {
  orgId: string;
  projectId: string;
  keyId: string;
}

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
