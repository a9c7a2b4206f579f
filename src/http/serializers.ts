import fastJsonStringify from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';

/**
 * fast-json-stringify builds a route's serialiser for a status at the first answer with that
 * status, not at start. Fastify's own compiler builds every response schema of every route
 * (and of each GET's HEAD twin) while the server starts: with the error responses each route
 * documents, that was about 450 ms of `mediad serve`'s start-up CPU and generated code kept in
 * memory for answers most processes never give (bench/startup.ts). The schema still decides
 * what leaves: only when it is built changes. The wrapper costs a call per answer.
 */
export const lazySerializerCompiler: FastifySerializerCompiler<object> = ({ schema }) => {
  let serialise: ((data: unknown) => string) | null = null;
  return (data: unknown) => (serialise ??= fastJsonStringify(schema))(data);
};
