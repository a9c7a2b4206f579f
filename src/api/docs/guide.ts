import { API_VERSIONS, DEFAULT_VERSION, LATEST_VERSION } from '../../versions.js';
import { errorTable } from './errors.js';
import { firstStepsNode, firstStepsShell } from './first-steps.js';

// The guide of the API reference: the Markdown sections that open /docs (as the OpenAPI
// document's description) and that /llms.txt links to one by one (/docs/<slug>.md).

export interface GuideSection {
  slug: string;
  title: string;
  markdown: string;
}

export function guide(base: string, caFile: string | null): GuideSection[] {
  const ctx = { base, caFile };
  const trust = caFile
    ? `This server's certificate comes from its own certificate authority, \`${caFile}\` (created at first start): curl takes it with \`--cacert ${caFile}\`, Node.js with \`NODE_EXTRA_CA_CERTS=${caFile}\`, and it can be downloaded from \`${base}/ca.crt\`. Browsers need it installed once: \`mediad tls trust\` does that on the server's machine, and the README lists the steps per browser.`
    : '';
  return [
    {
      slug: 'getting-started',
      title: 'Getting started',
      markdown: `mediad stores media files and derives new ones from them: transcoded video, resized images, extracted audio, storyboards, and the intelligence kinds. Everything is this one HTTPS JSON API at \`${base}\`. ${trust}

**1. An API key.** Make one in the web application (its setup, or API keys), or on the server with \`mediad keys create --org acme --project dev\` (in a checkout: \`npm run mediad -- keys create …\`). The key (\`mdk_…\`) is shown once; mediad keeps only its hash. Send it as \`Authorization: Bearer <key>\`. The snippets here read it from \`MEDIAD_API_KEY\` and the project's id (\`prj_…\`, which \`keys create\` and the web application's overview show) from \`MEDIAD_PROJECT\`; \`mediad keys create\` prints the \`export\` line that sets both.

**2. Your first processed file**: upload a video from your machine, make a poster from it, wait for the task to end. Run it where \`clip.mp4\` is (the first line makes a test clip when there is none):

\`\`\`sh
${firstStepsShell(ctx)}
\`\`\`

The same in Node.js (18 or newer):

\`\`\`js
${firstStepsNode(ctx)}
\`\`\`

A file on the web instead: \`POST /files {"url": "https://…/clip.mp4"}\` fetches it (any public \`http(s)\` address of a video, image or audio file: yours, or openly licensed samples such as the Blender Foundation's open movies at download.blender.org or media files on Wikimedia Commons). mediad refuses addresses on private networks and this machine (\`source_refused\`) unless their \`host:port\` is listed in \`MEDIAD_ALLOWED_URL_HOSTS\` when mediad starts; to add a file from this machine, upload it as above.

**3. Be told when it ends** instead of polling: give the task a \`webhook_url\` (see *Receive a webhook*). What each kind accepts (options, formats, codecs) is \`GET /tasks-config\` and the \`POST /tasks\` reference below, with an example per kind. Outputs join the input's media under the task's \`ref\`, so \`GET /media/{id}\` shows them in \`urls\`.`,
    },
    {
      slug: 'webhooks',
      title: 'Receive a webhook',
      markdown: `When a task with a \`webhook_url\` ends, mediad POSTs the task to it; a webhook endpoint (\`POST /webhooks {url, events}\`) receives the project's events. Both are signed per Standard Webhooks (standardwebhooks.com): headers \`webhook-id\`, \`webhook-timestamp\` and \`webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">\`, keyed with the secret's bytes (base64 after \`whsec_\`). Task webhooks use the project's secret (\`GET /project/webhook-secret\`), endpoints their own (shown when created). During a rotation both secrets sign, space-separated.

Verify it before you trust it, on the raw body:

\`\`\`js
import { createHmac, timingSafeEqual } from 'node:crypto';

function verify(secret, headers, rawBody) {
  const id = headers['webhook-id'], ts = headers['webhook-timestamp'];
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false; // replay window
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(\`\${id}.\${ts}.\${rawBody}\`).digest();
  return headers['webhook-signature'].split(' ').some((sig) => {
    const given = Buffer.from(sig.replace(/^v1,/, ''), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
\`\`\`

Answer 2xx to accept it. Anything else is retried immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (\`Retry-After\` honoured); \`410 Gone\` stops at once. \`webhook-id\` stays the same across retries: dedupe by it. Every attempt is listed under \`GET /webhooks/{id}/deliveries\`.`,
    },
    {
      slug: 'versions',
      title: 'Versions and the two generations',
      markdown: `A request's version is its \`Accept-Version\` header, else \`ACCEPT_VERSION\` (what the 1.0 SDKs' \`version\` option sends), else its project's default (\`PATCH /project {"api_version": …}\`; new projects start on \`${DEFAULT_VERSION}\`). \`latest\` means \`${LATEST_VERSION}\`; versions: ${API_VERSIONS.map((v) => `\`${v}\``).join(', ')}. Every answer says which version it follows in a \`Mediad-Version\` header (and in \`meta.version\` in the envelope).

- **The envelope generation** (${API_VERSIONS.filter((v) => v !== LATEST_VERSION)
        .map((v) => `\`${v}\``)
        .join(
          ', ',
        )}): every answer is \`{meta, data, error, links}\`; lists carry \`meta.{limit,total,page,pages}\` and \`links.{self,first,prev,next,last}\`; errors \`error: {code, message, status, details?}\` with \`data: null\`. This is what this reference documents.
- **The bare generation** (\`${LATEST_VERSION}\`): the same resources, but an object is answered as itself (the envelope's \`data\`), a list as a JSON array with its pages in a \`Link\` header (RFC 8288: \`first\`, \`prev\`, \`next\`, \`last\`, \`self\`) and its total in \`X-Total-Count\`, an error as \`{code, message, status, details?}\`. Status codes, ids and everything else are the same. \`${base}/openapi.json?generation=bare\` is this document with the bare shapes.`,
    },
    {
      slug: 'conventions',
      title: 'Pagination, idempotency, errors',
      markdown: `**Pagination.** \`page\` (1–1,000,000,000, default 1) and \`limit\` (1–100, default 20; 10 for automations). A page past the last is an empty list with the right totals.

**Idempotency.** Any POST may carry \`Idempotency-Key\` (16–32 printable characters), kept 24 hours per project: the same request again gets the first answer again (with \`Idempotent-Replayed: true\`); the same key with another body is 422 \`idempotency_key_reused\`; while the first still runs, 409.

**Limits.** JSON bodies up to \`MEDIAD_BODY_LIMIT_BYTES\`, nested at most 64 levels; per-key request rates (429 with \`Retry-After\`); pending tasks per project (429 \`too_many_tasks\`); file size, pixels, frames and duration (422 \`media_limit_exceeded\`).

**Errors.** Every error has a stable \`code\`, a human \`message\` that says what to do next, the HTTP \`status\`, and \`details\` (\`[{field, message}]\`) when fields are at fault. A failed task shows \`error\` (the message) and \`error_code\`.

${errorTable()}`,
    },
  ];
}

/** The whole guide as one Markdown text (the OpenAPI document's description). */
export function guideMarkdown(base: string, caFile: string | null): string {
  return guide(base, caFile)
    .map((s) => `## ${s.title}\n\n${s.markdown}`)
    .join('\n\n');
}
