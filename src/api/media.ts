import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { listBody, objectBody } from '../http/envelope.js';
import { nativeJson } from '../http/json-text.js';
import {
  errorResponses,
  IdParams,
  listEnvelope,
  Metadata,
  Nullable,
  objectEnvelope,
  pageQuery,
} from '../http/schemas.js';
import { createMedia, deleteMedia, getMedia, listMedia, updateMedia } from '../services/media/media.js';
import { DeletedSchema, EmbeddedFileSchema } from './file-schemas.js';

export const MediaSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('media'),
  kind: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  alt: Type.Optional(Type.String()),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
  duration: Type.Optional(Type.Number()),
  files: Type.Array(EmbeddedFileSchema),
  urls: Type.Record(Type.String(), Type.String()),
  background: Type.Optional(Type.String()),
  metadata: Metadata,
  created: Type.String(),
  updated: Type.String(),
});

const MediaQuery = pageQuery(20, {
  kind: Type.Optional(Type.Enum(['video', 'image', 'audio'])),
  folder: Type.Optional(Type.String({ maxLength: 255 })),
  ref: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  status: Type.Optional(Type.Enum(['ready', 'processing', 'failed'])),
  created_after: Type.Optional(Type.String({ format: 'date-time' })),
  created_before: Type.Optional(Type.String({ format: 'date-time' })),
  q: Type.Optional(Type.String({ maxLength: 200 })),
});

const Text = (max: number) => Nullable(Type.String({ maxLength: max }));
const MediaBody = Type.Object(
  { title: Type.Optional(Text(1000)), alt: Type.Optional(Text(5000)), metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);

export const mediaRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/media`;
  const links = (id: string) => ({ self: `${base}/${id}`, parent: base });
  const one = { params: IdParams, response: { 200: objectEnvelope(MediaSchema), ...errorResponses } };

  app.post(
    '/media',
    { schema: { body: MediaBody, response: { 201: objectEnvelope(MediaSchema), ...errorResponses } } },
    async (req, reply) => {
      const media = await createMedia(deps, req.auth!, req.body);
      return reply.code(201).send(objectBody(req, media, links(media.id)));
    },
  );

  app.get(
    '/media',
    {
      ...nativeJson,
      schema: { querystring: MediaQuery, response: { 200: listEnvelope(MediaSchema), ...errorResponses } },
    },
    async (req) => {
      const { page, limit, ...filter } = req.query;
      const extra = Object.fromEntries(Object.entries(filter).filter((e): e is [string, string] => e[1] !== undefined));
      return listBody(req, base, await listMedia(deps, req.auth!, { page, limit }, filter), extra);
    },
  );

  app.get('/media/:id', { ...nativeJson, schema: one }, async (req) =>
    objectBody(req, await getMedia(deps, req.auth!, req.params.id), links(req.params.id)),
  );

  app.patch('/media/:id', { schema: { ...one, body: MediaBody } }, async (req) =>
    objectBody(req, await updateMedia(deps, req.auth!, req.params.id, req.body), links(req.params.id)),
  );

  app.delete(
    '/media/:id',
    { schema: { params: IdParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      await deleteMedia(deps, req.auth!, req.params.id);
      const id = req.params.id;
      return objectBody(req, { id, object: 'media', deleted: true, message: `${id} deleted` }, links(id));
    },
  );
};
