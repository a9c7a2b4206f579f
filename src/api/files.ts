import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../deps.js';
import { listBody, objectBody } from '../http/envelope.js';
import { asSerialised, nativeJson } from '../http/json-text.js';
import { IdParams, errorResponses, listEnvelope, objectEnvelope, plainPageQuery } from '../http/schemas.js';
import { createFileFromUrl, deleteFile, getFile, listFiles, updateFile } from '../services/media/files.js';
import { CreateFileBody, DeletedSchema, FileSchema, PatchFileBody } from './file-schemas.js';

export const filesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/files`;
  const links = (id: string) => ({ self: `${base}/${id}`, parent: base });

  app.post(
    '/files',
    { schema: { body: CreateFileBody, response: { 201: objectEnvelope(FileSchema), ...errorResponses } } },
    async (req, reply) => {
      const { url, ...input } = req.body;
      const abort = new AbortController();
      req.raw.once('close', () => {
        if (!reply.sent) abort.abort();
      });
      const file = await createFileFromUrl(deps, req.auth!, url, input, abort.signal);
      return reply.code(201).send(objectBody(req, file, links(file.id)));
    },
  );

  app.get(
    '/files',
    {
      ...nativeJson,
      schema: { querystring: plainPageQuery(20), response: { 200: listEnvelope(FileSchema), ...errorResponses } },
    },
    async (req) => asSerialised(listBody(req, base, await listFiles(deps, req.auth!, req.query))),
  );

  app.get(
    '/files/:id',
    { ...nativeJson, schema: { params: IdParams, response: { 200: objectEnvelope(FileSchema), ...errorResponses } } },
    async (req) => {
      // The id read is the one asked for (compared exactly), so the links are made from it.
      return asSerialised(objectBody(req, await getFile(deps, req.auth!, req.params.id), links(req.params.id)));
    },
  );

  app.patch(
    '/files/:id',
    {
      schema: {
        params: IdParams,
        body: PatchFileBody,
        response: { 200: objectEnvelope(FileSchema), ...errorResponses },
      },
    },
    async (req) => {
      const file = await updateFile(deps, req.auth!, req.params.id, req.body);
      return objectBody(req, file, links(file.id));
    },
  );

  app.delete(
    '/files/:id',
    { schema: { params: IdParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      await deleteFile(deps, req.auth!, req.params.id);
      const id = req.params.id;
      return objectBody(req, { id, object: 'source', deleted: true, message: `${id} deleted` }, links(id));
    },
  );
};
