import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { EVENT_TYPES } from '../events/record.js';
import { listBody, objectBody } from '../http/envelope.js';
import { IdParams, errorResponses, listEnvelope, objectEnvelope, pageQuery } from '../http/schemas.js';
import { getEvent, listEvents } from '../services/media/events.js';

const EventSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('event'),
  type: Type.String(),
  // The resource as the API showed it when the event happened.
  data: Type.Record(Type.String(), Type.Unknown()),
  // Present when an automation's work caused the event.
  cause: Type.Optional(
    Type.Object({
      automation_id: Type.String(),
      chain: Type.Array(Type.String()),
      depth: Type.Integer(),
      // The event that began the chain: a client's upload, a task it made…
      root_event_id: Type.Optional(Type.String()),
    }),
  ),
  created: Type.String(),
});

// A type (`task.failed`) or every type of a resource (`task.*`).
const EVENT_PREFIXES = [...new Set(EVENT_TYPES.map((t) => `${t.split('.')[0]}.*`))];
const EventQuery = pageQuery(20, { type: Type.Optional(Type.Enum([...EVENT_TYPES, ...EVENT_PREFIXES])) });

/** The project's event log: what webhooks deliver, readable after the fact. */
export const eventsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/events`;

  app.get(
    '/events',
    { schema: { querystring: EventQuery, response: { 200: listEnvelope(EventSchema), ...errorResponses } } },
    async (req) => {
      const { type } = req.query;
      return listBody(req, base, await listEvents(deps, req.auth!, req.query, { type }), type ? { type } : {});
    },
  );

  app.get(
    '/events/:id',
    { schema: { params: IdParams, response: { 200: objectEnvelope(EventSchema), ...errorResponses } } },
    async (req) =>
      objectBody(req, await getEvent(deps, req.auth!, req.params.id), {
        self: `${base}/${req.params.id}`,
        parent: base,
      }),
  );
};
