import fastJsonStringify from 'fast-json-stringify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { generationOf, DEFAULT_VERSION, type ApiVersion } from '../versions.js';
import { JsonText } from './json-text.js';

// The one representation layer of both API generations (http/version.ts). A route returns its
// resource in the envelope ({meta, data, error, links}: envelope.ts builds it); for a request of
// the bare generation this hook answers the envelope's `data` instead — an object as itself, a
// list as an array with its pagination in a Link header (RFC 8288) and its total in
// X-Total-Count, an error as its `error` object — and serialises it with the route's own schema
// for that part, so the response schema still lets nothing else out. No route knows which
// generation it answers.

/** The version a request is answered in: asked for, else its project's, else the default. */
export function versionOf(req: FastifyRequest): ApiVersion {
  return req.apiVersion ?? DEFAULT_VERSION;
}

interface Envelope {
  meta: { type: 'object' | 'list' | 'error'; total?: number; version?: string };
  data: unknown;
  error?: unknown;
  links: Record<string, string | null>;
}

function isEnvelope(payload: unknown): payload is Envelope {
  return (
    typeof payload === 'object' && payload !== null && 'meta' in payload && 'links' in payload && 'data' in payload
  );
}

/** The part of the envelope the bare generation answers with: `error` for errors, else `data`. */
const bareKey = (e: Envelope) => (e.meta.type === 'error' ? 'error' : 'data');

type Serialise = (value: unknown) => string;
const serialisers = new WeakMap<object, Serialise>();

/** The route's response schema for this status (exact, then its class such as 4xx), if it has one. */
function responseSchema(req: FastifyRequest, status: number): Record<string, unknown> | undefined {
  const responses = req.routeOptions.schema?.response as Record<string, Record<string, unknown>> | undefined;
  if (!responses) return undefined;
  return (
    responses[String(status)] ??
    responses[`${Math.floor(status / 100)}xx`] ??
    responses[`${Math.floor(status / 100)}XX`]
  );
}

/** fast-json-stringify of the schema's `data` (or `error`) property: the allow-list of the bare body. */
function bareSerialiser(envelopeSchema: Record<string, unknown> | undefined, key: 'data' | 'error'): Serialise {
  const part = (envelopeSchema?.properties as Record<string, object> | undefined)?.[key];
  if (!part) return JSON.stringify;
  let s = serialisers.get(part);
  if (!s) {
    s = fastJsonStringify(part) as Serialise;
    serialisers.set(part, s);
  }
  return s;
}

const RELS = ['self', 'first', 'prev', 'next', 'last'] as const;

function linkHeader(links: Envelope['links']): string {
  return RELS.flatMap((rel) => (links[rel] ? [`<${links[rel]}>; rel="${rel}"`] : [])).join(', ');
}

function toBare(req: FastifyRequest, reply: FastifyReply, e: Envelope): unknown {
  const key = bareKey(e);
  const body = key === 'error' ? e.error : e.data;
  if (e.meta.type === 'list') {
    reply.header('link', linkHeader(e.links));
    reply.header('x-total-count', String(e.meta.total ?? 0));
  }
  if (body instanceof JsonText) {
    // Rendered where it was read (a page of files): already the bare body.
    reply.serializer((v: unknown) => (v instanceof JsonText ? v.text : JSON.stringify(v)));
    return body;
  }
  // Routes marked nativeJson build their bodies field by field: JSON.stringify is exact for them.
  const native = req.routeOptions.config.nativeJson === true;
  reply.serializer(native ? JSON.stringify : bareSerialiser(responseSchema(req, reply.statusCode), key));
  return body;
}

export function registerRepresentation(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every answer, and a promise per request shows
  // on the hot reads.
  app.addHook(
    'preSerialization',
    (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
      if (!isEnvelope(payload)) return done(null, payload);
      const version = versionOf(req);
      reply.header('mediad-version', version);
      done(null, generationOf(version) === 'bare' ? toBare(req, reply, payload) : payload);
    },
  );
}
