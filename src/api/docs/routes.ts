import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { guide } from './guide.js';
import { bareDocument } from './openapi.js';
import { readFile } from 'node:fs/promises';
import type { FastifyApiReferenceOptions } from '@scalar/fastify-api-reference';
import { caFileForClients, localCaPath } from '../../tls/ca-file.js';

/**
 * The API's own documentation, served by mediad with no key: the OpenAPI document (either
 * generation), the reference page (Scalar, bundled: nothing is fetched from elsewhere), and a
 * plain-text map for language models (llms.txt) with each guide section as Markdown.
 */
export async function docsRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const base = deps.config.publicUrl;
  const config = { unversioned: true };
  const sections = guide(base, caFileForClients(deps.config));
  let bare: Record<string, unknown> | undefined;

  app.get(
    '/openapi.json',
    {
      config,
      schema: {
        hide: true,
        querystring: Type.Object(
          { generation: Type.Optional(Type.Enum(['envelope', 'bare'])) },
          { additionalProperties: false },
        ),
      },
    },
    async (req, reply) => {
      const doc = app.swagger() as unknown as Record<string, unknown>;
      reply.header('cache-control', 'no-cache');
      if (req.query.generation === 'bare') return (bare ??= bareDocument(doc));
      return doc;
    },
  );

  scalarOnFirstUse(app, {
    routePrefix: '/docs',
    // The page loads the document from /openapi.json; its script is bundled in the package.
    // Everything that would reach a cloud is off: fonts, telemetry, the developer toolbar
    // ("Share", "Deploy", "Configure"), the agent ("Ask AI"), the client app button. Scalar
    // shows several of these on localhost unless told not to. test/api/docs-offline.test.ts
    // clicks every control with requests to other hosts refused.
    configuration: {
      url: '/openapi.json',
      title: 'mediad API reference',
      withDefaultFonts: false,
      hideClientButton: true,
      telemetry: false,
      showDeveloperTools: 'never',
      agent: { disabled: true },
      // Its generated clients know nothing of the local CA; each operation's x-codeSamples
      // (code-samples.ts: curl and Node.js with --cacert / NODE_EXTRA_CA_CERTS) run as copied.
      hiddenClients: true,
      // The one link that leaves the server ("Powered by Scalar").
      customCss: 'a[href^="https://www.scalar.com"] { display: none !important; }',
    },
    openApiDocumentEndpoints: { json: '/openapi-scalar.json', yaml: '/openapi-scalar.yaml' },
    logLevel: 'warn',
  });

  // The local certificate authority, for clients to trust (also on plain HTTP: tls/first-contact.ts).
  app.get('/ca.crt', { config, schema: { hide: true } }, async (_req, reply) => {
    if (deps.config.tls)
      throw new AppError(
        'not_found',
        'this server uses its own certificate (MEDIAD_TLS_CERT), which clients already trust: no local CA to download',
      );
    const pem = await readFile(localCaPath(deps.config.dataDir), 'utf8');
    return reply
      .type('application/x-pem-file')
      .header('content-disposition', 'attachment; filename="mediad-ca.crt"')
      .header('cache-control', 'no-cache')
      .send(pem);
  });

  app.get('/llms.txt', { config, schema: { hide: true } }, async (_req, reply) => {
    const lines = [
      '# mediad API',
      '',
      '> A self-hostable media processing service: store media files and derive new ones (transcodes, images, audio, storyboards, intelligence) through one HTTPS JSON API with Bearer API keys.',
      '',
      `The API is at ${base}. Its OpenAPI 3.1 document: ${base}/openapi.json (bare generation: ${base}/openapi.json?generation=bare). The reference: ${base}/docs.`,
      '',
      '## Guide',
      '',
      ...sections.map((s) => `- [${s.title}](${base}/docs/${s.slug}.md)`),
    ];
    return reply.type('text/plain; charset=utf-8').send(`${lines.join('\n')}\n`);
  });

  app.get(
    '/docs/:section.md',
    { config, schema: { hide: true, params: Type.Object({ section: Type.String({ maxLength: 64 }) }) } },
    async (req, reply) => {
      const s = sections.find((x) => x.slug === req.params.section);
      if (!s) throw new AppError('not_found', `no guide section ${req.params.section}; see ${base}/llms.txt`);
      return reply.type('text/markdown; charset=utf-8').send(`# ${s.title}\n\n${s.markdown}\n`);
    },
  );
}

/** The routes Scalar's plugin adds under its prefix (its page, its script, the document it re-serves). */
const SCALAR_PATHS = ['', '/', '/js/scalar.js', '/openapi-scalar.json', '/openapi-scalar.yaml'];
/** Headers of the inner answer that belong to its own connection, not to ours. */
const HOP_HEADERS = new Set(['connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding']);

/**
 * Scalar's reference page, loaded at the first request for it. Its package reads its 3.5 MB
 * script into memory when registered and brings an OpenAPI parser and a YAML library: 16 MB of
 * RSS and ~120 ms of start-up CPU for a page few processes ever serve (bench/startup.ts). Its
 * routes are declared here; the first request registers the plugin, as configured, on a
 * Fastify instance of its own that is never bound to a port, and every request is answered by
 * it through inject().
 */
function scalarOnFirstUse(app: FastifyInstance, options: FastifyApiReferenceOptions): void {
  let inner: Promise<FastifyInstance> | null = null;
  const load = async () => {
    const { default: scalar } = await import('@scalar/fastify-api-reference');
    const reference = Fastify({ loggerInstance: app.log });
    await reference.register(scalar, options);
    await reference.ready();
    return reference;
  };
  const answer = async (req: FastifyRequest, reply: FastifyReply) => {
    inner ??= load().catch((err: unknown) => {
      inner = null;
      throw err;
    });
    const res = await (await inner).inject({ method: 'GET', url: req.url, headers: req.headers });
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
    return reply.code(res.statusCode).send(res.rawPayload);
  };
  const prefix = options.routePrefix ?? '/docs';
  for (const path of SCALAR_PATHS)
    app.get(`${prefix}${path}`, { config: { unversioned: true }, schema: { hide: true }, logLevel: 'warn' }, answer);
}
