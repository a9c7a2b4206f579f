import 'fastify';
import type { AuthContext } from '../services/access.js';
import type { ApiVersion } from '../versions.js';

export type { AuthContext };

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
    /** Asked for in the headers, or the project's default once authenticated (http/version.ts). */
    apiVersion?: ApiVersion;
  }
  interface FastifyContextConfig {
    /** Not a versioned API resource (health, file delivery): Accept-Version is ignored. */
    unversioned?: boolean;
    /**
     * A POST that only reads (POST /image-urls signs a URL to read a file): access is checked as
     * for a GET of its family, so viewers and read-scoped keys may call it.
     */
    readsOnly?: boolean;
    /** The route serialises with JSON.stringify (http/json-text.ts). */
    nativeJson?: boolean;
  }
}
