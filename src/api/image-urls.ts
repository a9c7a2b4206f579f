import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { AppError, isAppError } from '../errors.js';
import { listBody, objectBody } from '../http/envelope.js';
import { errorResponses, listEnvelope, objectEnvelope } from '../http/schemas.js';
import { prepareBytes } from '../http/range.js';
import { countImageUrlResult } from '../metrics/registry.js';
import { projectAudit } from '../services/audit.js';
import {
  ImageUrlService,
  IMAGE_URL_PREFIX,
  splitImagePath,
  type ImageAnswer,
  type ResultLock,
} from '../services/media/image-urls.js';
import { createAdvisoryLocker } from '../db/advisory-locker.js';
import type { RateLimitStore } from '../ratelimit/stores.js';
import { getImageUrlKey, revealImageUrlKey, rotateImageUrlKey } from '../services/media/image-url-keys.js';
import { getImageUrlSettings, updateImageUrlSettings } from '../services/media/image-url-settings.js';
import { deletePreset, getPreset, listPresets, putPreset } from '../services/media/image-presets.js';
import { makeImageUrl } from '../services/media/image-url-sign.js';

// On-the-fly image URLs (docs/image-urls.md): GET /img/… (public, signed) and the API that manages
// the key, the settings and the presets, and signs URLs for clients that do not sign themselves.

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Unsigned preset URLs keep their address when the preset changes: cached for an hour only. */
const PRESET_CACHE = 'public, max-age=3600';

async function sendImage(req: FastifyRequest, reply: FastifyReply, deps: Deps, answer: ImageAnswer) {
  const { image } = answer;
  reply
    .header('etag', image.etag)
    .header('cache-control', image.signed ? IMMUTABLE : PRESET_CACHE)
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff');
  if (image.varyAccept) reply.header('vary', 'Accept');
  if (answer.kind === 'computed') reply.header('server-timing', missTiming(answer, reply.elapsedTime));
  if (answer.kind === 'not_modified') return reply.code(304).send();
  // The rest as file delivery answers (http/range.ts): Range, If-Range, Content-Length, HEAD.
  const bytes = prepareBytes(req, reply, {
    etag: image.etag,
    type: answer.kind === 'cached' ? answer.row.type : answer.result.mime,
    size: answer.kind === 'cached' ? Number(answer.row.size) : answer.result.data.length,
    noun: 'image',
  });
  if (!bytes) return reply.send();
  const { slice } = bytes;
  if (answer.kind === 'computed')
    return reply.send(slice ? answer.result.data.subarray(slice.start, slice.end + 1) : answer.result.data);
  return reply.send(await deps.blobs.read(answer.row.blob_key, slice));
}

/**
 * Server-Timing of a miss (W3C Server Timing; browsers' developer tools show it): whether it was
 * computed for this request or shared, the wait for a slot, the computation, and the time in the
 * server until the answer was sent, so a slow image tells where its time went.
 */
function missTiming(answer: Extract<ImageAnswer, { kind: 'computed' }>, totalMs: number): string {
  const parts = [`cache;desc=${answer.shared ? 'shared' : 'miss'}`];
  if (answer.timing)
    parts.push(`wait;dur=${answer.timing.waitMs.toFixed(2)}`, `render;dur=${answer.timing.renderMs.toFixed(2)}`);
  parts.push(`total;dur=${totalMs.toFixed(2)}`);
  return parts.join(', ');
}

/** A result's lock on PostgreSQL (advisory locks, as tus uploads use), so processes make each result once. */
function resultLock(deps: Deps): { lock: ResultLock; close(): Promise<void> } | null {
  if (deps.config.database.dialect !== 'postgres') return null;
  const locker = createAdvisoryLocker(deps.config.database.url, {
    namespace: 'mediad-image-url',
    channel: 'mediad_image_url_release',
    // A waiter waits at most as long as a computation may run (sharp's timeout is 60 s).
    acquireTimeoutMs: 65_000,
    poolSize: 10,
  });
  const never = new AbortController().signal;
  return {
    lock: async (id) => {
      const l = locker.newLock(id);
      // Asked to let go by a waiter: a computation is not cut short (the waiter keeps polling).
      await l.lock(never, async () => {});
      return () => l.unlock();
    },
    close: () => locker.close(),
  };
}

/** GET and HEAD /img/{project}/{signature}/{options}/{file_id}[.ext]: public, checked by signature. */
export async function imageUrlRoutes(
  app: FastifyInstance,
  { deps, rateStore }: { deps: Deps; rateStore: RateLimitStore },
): Promise<void> {
  const locks = resultLock(deps);
  const service = new ImageUrlService(deps, { misses: rateStore, lock: locks?.lock ?? null });
  app.addHook('onClose', async () => {
    await service.close();
    await locks?.close();
  });
  const config = { unversioned: true };
  const serve = async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0]!.slice(IMAGE_URL_PREFIX.length + 1);
    let target;
    try {
      target = splitImagePath(decodeURIComponent(path));
    } catch {
      target = null;
    }
    if (!target) throw new AppError('not_found', 'no image at this address');
    let answer: ImageAnswer;
    try {
      answer = await service.answer(target, {
        accept: req.headers.accept,
        ifNoneMatch: req.headers['if-none-match'],
      });
    } catch (err) {
      const code = isAppError(err) ? err.code : 'internal_error';
      countImageUrlResult(
        code === 'rate_limited'
          ? 'rate_limited'
          : isAppError(err) && err.status < 500 && err.status !== 422
            ? 'rejected'
            : 'failed',
      );
      throw err;
    }
    countImageUrlResult(
      answer.kind === 'cached'
        ? 'hit'
        : answer.kind === 'not_modified'
          ? 'not_modified'
          : answer.shared
            ? 'coalesced'
            : 'miss',
    );
    if (answer.kind === 'cached') {
      try {
        return await sendImage(req, reply, deps, answer);
      } catch (err) {
        // The row outlived its blob (removed by hand, a crash mid-eviction): computed again.
        if (!isAppError(err) || err.code !== 'not_found') throw err;
        await service.forget(answer.row.id);
        return serve(req, reply);
      }
    }
    return sendImage(req, reply, deps, answer);
  };
  const bytes = {
    description: 'The image (or the range asked for: 206), with its own Content-Type',
    content: { 'image/*': { schema: { type: 'string', format: 'binary' } } },
  };
  app.get(
    `${IMAGE_URL_PREFIX}/*`,
    { config, exposeHeadRoute: false, schema: { response: { 200: bytes, 206: bytes, ...errorResponses } } },
    serve,
  );
  app.head(`${IMAGE_URL_PREFIX}/*`, { config, schema: { response: errorResponses } }, serve);
}

const KeySchema = Type.Object({
  object: Type.Literal('image_url_key'),
  prefix: Type.String(),
  created: Type.String(),
  previous_key_expires: Type.Union([Type.String(), Type.Null()]),
  key: Type.Optional(Type.String()),
});
const Bytes = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const SettingsSchema = Type.Object({
  object: Type.Literal('image_url_settings'),
  allow_unsigned_presets: Type.Boolean(),
  cache_bytes: Type.Union([Bytes, Type.Null()], {
    description: "The project's own cache budget in bytes; null: the server's default",
  }),
  cache: Type.Object(
    {
      budget_bytes: Bytes,
      default_bytes: Bytes,
      max_bytes: Bytes,
      used_bytes: Bytes,
      results: Type.Integer({ minimum: 0 }),
    },
    {
      description:
        "The budget in force, the server's default and maximum, and what the project's cached results take now",
    },
  ),
});
const SettingsPatch = Type.Object(
  {
    allow_unsigned_presets: Type.Optional(Type.Boolean()),
    cache_bytes: Type.Optional(
      Type.Union([Bytes, Type.Null()], {
        description:
          "Bytes of cached results the project may keep (above the whole cache's budget: lowered to it); null: the server's default",
      }),
    ),
  },
  { additionalProperties: false },
);
const OptionValue = Type.Union([Type.String({ maxLength: 64 }), Type.Number()]);
/** The image URL options as JSON: names as in a URL (docs/image-urls.md); each value is checked as in a URL. */
const OptionsObject = Type.Record(Type.String({ maxLength: 32 }), OptionValue, { maxProperties: 16 });
const PresetSchema = Type.Object({
  object: Type.Literal('image_preset'),
  name: Type.String(),
  options: Type.Record(Type.String(), OptionValue),
  path: Type.String(),
  created: Type.String(),
  updated: Type.String(),
});
const PresetBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 64 }), options: OptionsObject },
  { additionalProperties: false },
);
const PresetPut = Type.Object({ options: OptionsObject }, { additionalProperties: false });
const NameParams = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]*$' }),
});
const DeletedSchema = Type.Object({
  object: Type.Literal('image_preset'),
  name: Type.String(),
  deleted: Type.Literal(true),
});
const ImageUrlBody = Type.Object(
  {
    file_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^file_[A-Za-z0-9]+$' }),
    options: Type.Optional(OptionsObject),
    extension: Type.Optional(Type.Enum(['jpg', 'jpeg', 'png', 'webp', 'avif', 'gif'])),
    widths: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 8192 }), { minItems: 1, maxItems: 12 })),
  },
  { additionalProperties: false },
);
const ImageUrlSchema = Type.Object({
  object: Type.Literal('image_url'),
  file_id: Type.String(),
  options: Type.String(),
  url: Type.String(),
  srcset: Type.Optional(Type.String()),
});

const MAX_PRESETS = 100;

/** The API of image URLs: key, settings, presets, signing. */
export const imageUrlApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = deps.config.publicUrl;
  const keyLinks = { self: `${base}/project/image-url-key`, parent: `${base}/project` };
  const keyResponse = { response: { 200: objectEnvelope(KeySchema), ...errorResponses } };

  app.get('/project/image-url-key', { schema: keyResponse }, async (req) =>
    objectBody(req, await getImageUrlKey(deps, req.auth!.projectId, false), keyLinks),
  );
  app.post('/project/image-url-key', { schema: keyResponse }, async (req) =>
    objectBody(req, await getImageUrlKey(deps, req.auth!.projectId, false), keyLinks),
  );
  app.post('/project/image-url-key/reveal', { schema: keyResponse }, async (req) =>
    objectBody(req, await revealImageUrlKey(deps, req.auth!.projectId, projectAudit(req.auth!, req.ip)), keyLinks),
  );
  app.post('/project/image-url-key/rotate', { schema: keyResponse }, async (req) =>
    objectBody(req, await rotateImageUrlKey(deps, req.auth!.projectId, projectAudit(req.auth!, req.ip)), keyLinks),
  );

  const settingsLinks = { self: `${base}/project/image-url-settings`, parent: `${base}/project` };
  app.get(
    '/project/image-url-settings',
    { schema: { response: { 200: objectEnvelope(SettingsSchema), ...errorResponses } } },
    async (req) => objectBody(req, await getImageUrlSettings(deps, req.auth!.projectId), settingsLinks),
  );
  app.patch(
    '/project/image-url-settings',
    { schema: { body: SettingsPatch, response: { 200: objectEnvelope(SettingsSchema), ...errorResponses } } },
    async (req) => objectBody(req, await updateImageUrlSettings(deps, req.auth!.projectId, req.body), settingsLinks),
  );

  const presetLinks = (name: string) => ({ self: `${base}/image-presets/${name}`, parent: `${base}/image-presets` });
  app.get(
    '/image-presets',
    { schema: { response: { 200: listEnvelope(PresetSchema), ...errorResponses } } },
    async (req) => {
      const items = await listPresets(deps, req.auth!.projectId);
      return listBody(req, `${base}/image-presets`, { items, total: items.length, page: 1, limit: MAX_PRESETS });
    },
  );
  app.post(
    '/image-presets',
    { schema: { body: PresetBody, response: { 201: objectEnvelope(PresetSchema), ...errorResponses } } },
    async (req, reply) => {
      const existing = await listPresets(deps, req.auth!.projectId);
      if (existing.some((p) => p.name === req.body.name))
        throw new AppError(
          'conflict',
          `a preset named ${req.body.name} exists; change it with PUT /image-presets/${req.body.name}`,
        );
      if (existing.length >= MAX_PRESETS)
        throw new AppError('conflict', `a project has at most ${MAX_PRESETS} image presets`);
      const { preset } = await putPreset(deps, req.auth!.projectId, req.body.name, req.body.options);
      return reply.code(201).send(objectBody(req, preset, presetLinks(preset.name)));
    },
  );
  app.get(
    '/image-presets/:name',
    { schema: { params: NameParams, response: { 200: objectEnvelope(PresetSchema), ...errorResponses } } },
    async (req) =>
      objectBody(req, await getPreset(deps, req.auth!.projectId, req.params.name), presetLinks(req.params.name)),
  );
  app.put(
    '/image-presets/:name',
    {
      schema: {
        params: NameParams,
        body: PresetPut,
        response: { 200: objectEnvelope(PresetSchema), ...errorResponses },
      },
    },
    async (req) => {
      await getPreset(deps, req.auth!.projectId, req.params.name);
      const { preset } = await putPreset(deps, req.auth!.projectId, req.params.name, req.body.options);
      return objectBody(req, preset, presetLinks(preset.name));
    },
  );
  app.delete(
    '/image-presets/:name',
    { schema: { params: NameParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      await deletePreset(deps, req.auth!.projectId, req.params.name);
      return objectBody(
        req,
        { object: 'image_preset' as const, name: req.params.name, deleted: true as const },
        presetLinks(req.params.name),
      );
    },
  );

  app.post(
    '/image-urls',
    {
      // Signing makes a URL to read one of the project's files: the files read scope is enough.
      config: { readsOnly: true },
      schema: { body: ImageUrlBody, response: { 200: objectEnvelope(ImageUrlSchema), ...errorResponses } },
    },
    async (req) =>
      objectBody(req, await makeImageUrl(deps, req.auth!.projectId, req.body), {
        self: `${base}/image-urls`,
        parent: base,
      }),
  );
};
