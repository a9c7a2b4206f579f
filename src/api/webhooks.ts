import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { EVENT_TYPES } from '../events/record.js';
import { listBody, objectBody } from '../http/envelope.js';
import {
  IdParams,
  Nullable,
  errorResponses,
  listEnvelope,
  objectEnvelope,
  pageQuery,
  plainPageQuery,
} from '../http/schemas.js';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  getEndpointDelivery,
  listEndpointDeliveries,
  listEndpoints,
  retryEndpointDelivery,
  rotateEndpointSecret,
  sendTestEvent,
  updateEndpoint,
} from '../services/media/webhook-endpoints.js';
import { ALL_EVENTS, MAX_URL_LENGTH } from '../webhooks/endpoint-rules.js';
import { projectAudit } from '../services/audit.js';
import { DeletedSchema } from './file-schemas.js';

const EndpointSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Optional(Type.String()),
  status: Type.String(),
  enabled: Type.Boolean(),
  disabled_reason: Type.Optional(Type.String()),
  disabled_at: Type.Optional(Type.String()),
  failed_deliveries: Type.Integer(),
  // Only in the answers to create and rotate-secret.
  secret: Type.Optional(Type.String()),
  previous_secret_expires: Type.Optional(Type.String()),
  created: Type.String(),
  updated: Type.String(),
});

const AttemptSchema = Type.Object({
  attempt: Type.Integer(),
  status: Type.String(),
  status_code: Type.Optional(Type.Integer()),
  duration_ms: Type.Integer(),
  error: Type.Optional(Type.String()),
  created: Type.String(),
});

const DeliverySchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_delivery'),
  endpoint_id: Type.Optional(Type.String()),
  event_id: Type.Optional(Type.String()),
  event_type: Type.String(),
  url: Type.String(),
  status: Type.String(),
  next_attempt: Type.Optional(Type.String()),
  attempts: Type.Array(AttemptSchema),
  // Only when one delivery is read (and in the answer to a test): the request body exactly as sent.
  payload: Type.Optional(Type.String()),
  created: Type.String(),
  updated: Type.String(),
});

const Url = Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH });
const Events = Type.Array(Type.Enum([ALL_EVENTS, ...EVENT_TYPES]), { minItems: 1, maxItems: EVENT_TYPES.length + 1 });
const Description = Nullable(Type.String({ maxLength: 1000 }));
const CreateBody = Type.Object(
  { url: Url, events: Events, description: Type.Optional(Description) },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    status: Type.Optional(Type.Enum(['active', 'disabled'])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const DeliveryParams = Type.Object({ id: IdParams.properties.id, delivery_id: IdParams.properties.id });
const DeliveryQuery = pageQuery(20, { status: Type.Optional(Type.Enum(['pending', 'delivered', 'failed'])) });

/** Webhook endpoints: subscriptions to the project's events, signed per Standard Webhooks with their own secret. */
export const webhooksRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/webhooks`;
  const links = (id: string) => ({ self: `${base}/${id}`, parent: base });
  const deliveryLinks = (id: string, deliveryId: string) => ({
    self: `${base}/${id}/deliveries/${deliveryId}`,
    parent: `${base}/${id}/deliveries`,
  });
  const one = { params: IdParams, response: { 200: objectEnvelope(EndpointSchema), ...errorResponses } };

  app.post(
    '/webhooks',
    { schema: { body: CreateBody, response: { 201: objectEnvelope(EndpointSchema), ...errorResponses } } },
    async (req, reply) => {
      const endpoint = await createEndpoint(deps, req.auth!, req.body, projectAudit(req.auth!, req.ip));
      return reply.code(201).send(objectBody(req, endpoint, links(endpoint.id)));
    },
  );

  app.get(
    '/webhooks',
    { schema: { querystring: plainPageQuery(20), response: { 200: listEnvelope(EndpointSchema), ...errorResponses } } },
    async (req) => listBody(req, base, await listEndpoints(deps, req.auth!, req.query)),
  );

  app.get('/webhooks/:id', { schema: one }, async (req) =>
    objectBody(req, await getEndpoint(deps, req.auth!, req.params.id), links(req.params.id)),
  );

  app.patch('/webhooks/:id', { schema: { ...one, body: PatchBody } }, async (req) =>
    objectBody(
      req,
      await updateEndpoint(deps, req.auth!, req.params.id, req.body, projectAudit(req.auth!, req.ip)),
      links(req.params.id),
    ),
  );

  app.delete(
    '/webhooks/:id',
    { schema: { params: IdParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      const id = req.params.id;
      await deleteEndpoint(deps, req.auth!, id, projectAudit(req.auth!, req.ip));
      return objectBody(req, { id, object: 'webhook_endpoint', deleted: true, message: `${id} deleted` }, links(id));
    },
  );

  app.post('/webhooks/:id/rotate-secret', { schema: one }, async (req) =>
    objectBody(
      req,
      await rotateEndpointSecret(deps, req.auth!, req.params.id, projectAudit(req.auth!, req.ip)),
      links(req.params.id),
    ),
  );

  // 202: the test event is queued now and sent like any delivery; its outcome shows in the deliveries.
  app.post(
    '/webhooks/:id/test',
    { schema: { params: IdParams, response: { 202: objectEnvelope(DeliverySchema), ...errorResponses } } },
    async (req, reply) => {
      const delivery = await sendTestEvent(deps, req.auth!, req.params.id);
      return reply.code(202).send(objectBody(req, delivery, deliveryLinks(req.params.id, delivery.id)));
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        params: IdParams,
        querystring: DeliveryQuery,
        response: { 200: listEnvelope(DeliverySchema), ...errorResponses },
      },
    },
    async (req) => {
      const { status } = req.query;
      const page_ = await listEndpointDeliveries(deps, req.auth!, req.params.id, req.query, status);
      return listBody(req, `${base}/${req.params.id}/deliveries`, page_, status ? { status } : {});
    },
  );

  app.get(
    '/webhooks/:id/deliveries/:delivery_id',
    { schema: { params: DeliveryParams, response: { 200: objectEnvelope(DeliverySchema), ...errorResponses } } },
    async (req) =>
      objectBody(
        req,
        await getEndpointDelivery(deps, req.auth!, req.params.id, req.params.delivery_id),
        deliveryLinks(req.params.id, req.params.delivery_id),
      ),
  );

  // 202: the delivery is scheduled now; its outcome shows in the deliveries listing.
  app.post(
    '/webhooks/:id/deliveries/:delivery_id/retry',
    { schema: { params: DeliveryParams, response: { 202: objectEnvelope(DeliverySchema), ...errorResponses } } },
    async (req, reply) => {
      const delivery = await retryEndpointDelivery(deps, req.auth!, req.params.id, req.params.delivery_id);
      return reply.code(202).send(objectBody(req, delivery, deliveryLinks(req.params.id, delivery.id)));
    },
  );
};
