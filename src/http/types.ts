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
}
