import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { objectBody } from '../http/envelope.js';
import { errorResponses, objectEnvelope } from '../http/schemas.js';
import { createUploadToken, UPLOAD_TOKEN_MAX_SECONDS } from '../services/media/upload-tokens.js';
import { TUS_PATH } from './tus-protocol.js';

// POST /uploads: a short-lived upload token (mdu_…) for the resumable upload endpoint, so a
// browser can upload with tus without holding an API key (docs/uploads.md).

const UploadTokenBody = Type.Object(
  {
    expires_in: Type.Optional(
      Type.Integer({ minimum: 60, maximum: UPLOAD_TOKEN_MAX_SECONDS, description: 'Seconds (default 3600)' }),
    ),
  },
  { additionalProperties: false },
);

const UploadTokenSchema = Type.Object({
  object: Type.Literal('upload_token'),
  id: Type.String(),
  token: Type.String({ description: 'Send as "Authorization: Bearer <token>" to the tus endpoint; shown once' }),
  upload_url: Type.String({ description: 'The tus endpoint' }),
  expires: Type.String(),
});

export const uploadTokenRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/uploads`;
  app.post(
    '/uploads',
    {
      schema: {
        body: Type.Optional(UploadTokenBody),
        response: { 201: objectEnvelope(UploadTokenSchema), ...errorResponses },
      },
    },
    async (req, reply) => {
      const created = await createUploadToken(deps, req.auth!.projectId, req.body?.expires_in ?? 3600);
      return reply.code(201).send(
        objectBody(
          req,
          {
            object: 'upload_token' as const,
            ...created,
            upload_url: `${deps.config.publicUrl}${TUS_PATH}`,
          },
          { self: base, parent: base },
        ),
      );
    },
  );
};
