import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { objectBody } from '../http/envelope.js';
import { errorResponses, objectEnvelope } from '../http/schemas.js';
import { checkFilename, normalizeFolder } from '../services/media/paths.js';
import { getProjectRow } from '../services/people/projects.js';
import { signedUrl } from '../services/media/signatures.js';
import { FilenameField, FolderField } from './file-schemas.js';

const MAX_EXPIRY_SECONDS = 7 * 86400;

const SignatureBody = Type.Object(
  {
    filename: FilenameField,
    folder: Type.Optional(FolderField),
    expiry: Type.Optional(Type.Integer({ minimum: 1 })),
    method: Type.Optional(Type.Union([Type.Literal('get'), Type.Literal('put')])),
  },
  { additionalProperties: false },
);

const SignatureSchema = Type.Object({
  object: Type.Literal('signature'),
  domain: Type.String(),
  folder: Type.String(),
  filename: Type.String(),
  expiry: Type.Integer(),
  method: Type.String(),
  signature: Type.String(),
  url: Type.String(),
});

export const signatureRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = deps.config.publicUrl;

  app.post(
    '/signatures',
    { schema: { body: SignatureBody, response: { 201: objectEnvelope(SignatureSchema), ...errorResponses } } },
    async (req, reply) => {
      const now = Math.floor(deps.clock.now().getTime() / 1000);
      const expiry = req.body.expiry ?? now + deps.config.delivery.signedUrlTtlSeconds;
      if (expiry <= now || expiry > now + MAX_EXPIRY_SECONDS) {
        throw new AppError(
          'validation_failed',
          `expiry must be a unix time in seconds in the future and at most 7 days away (now is ${now})`,
          { details: [{ field: 'expiry', message: 'out of range' }] },
        );
      }
      const project = await getProjectRow(deps, req.auth!.projectId);
      const signed = signedUrl(
        deps,
        project.id,
        project.signing_secret,
        normalizeFolder(req.body.folder),
        checkFilename(req.body.filename),
        expiry,
        req.body.method ?? 'get',
      );
      return reply
        .code(201)
        .send(
          objectBody(req, { object: 'signature' as const, ...signed }, { self: `${base}/signatures`, parent: base }),
        );
    },
  );
};
