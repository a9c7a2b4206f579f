import type { FastifyInstance, RouteOptions } from 'fastify';

// Hooks that only some routes need (a body default, Idempotency-Key handling) go on those
// routes alone: a scope-wide hook would also run, as an extra promise, on every GET.

/** Calls `each` for every route later added to `app`'s scope with one of `methods`. */
export function onRoutesWithMethod(app: FastifyInstance, methods: string[], each: (route: RouteOptions) => void): void {
  app.addHook('onRoute', (route) => {
    const routeMethods = Array.isArray(route.method) ? route.method : [route.method];
    if (routeMethods.some((m) => methods.includes(m))) each(route);
  });
}

type RouteHookName = 'preValidation' | 'preHandler' | 'onSend';

/** Appends `hook` to the route's own hooks of that name (run after the scope's hooks). */
export function addRouteHook(route: RouteOptions, name: RouteHookName, hook: unknown): void {
  const existing = route[name] as unknown;
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  (route as Record<RouteHookName, unknown>)[name] = [...list, hook];
}
