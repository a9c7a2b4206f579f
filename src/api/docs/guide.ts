import { API_VERSIONS, DEFAULT_VERSION, LATEST_VERSION } from '../../versions.js';
import { errorTable } from './errors.js';

// The guide of the API reference: the Markdown sections that open /docs (as the OpenAPI
// document's description) and that /llms.txt links to one by one (/docs/<slug>.md).

export interface GuideSection {
  slug: string;
  title: string;
  markdown: string;
}

export function guide(base: string): GuideSection[] {
  const curl = `curl --cacert data/tls/ca.crt -H "Authorization: Bearer $MEDIAD_KEY"`;
  return [
    {
      slug: 'getting-started',
      title: 'Getting started',
      markdown: `mediad stores media files and derives new ones from them: transcoded video, resized images, extracted audio, storyboards, and the intelligence kinds. Everything is this one HTTPS JSON API at \`${base}\`.

**1. Create an API key.** On the server: \`mediad keys create --org acme --project dev\` (in a checkout: \`npm run mediad -- keys create …\`). The key (\`mdk_…\`) is shown once; mediad keeps only its hash. Send it as \`Authorization: Bearer <key>\` on every request.

**2. Add a file** from a URL. mediad fetches it, probes it and stores it in a new media:

\`\`\`sh
${curl} -H 'Content-Type: application/json' \\
  -d '{"url": "https://example.com/clip.mp4", "folder": "uploads"}' ${base}/files
\`\`\`

\`\`\`js
const api = (path, init = {}) => fetch(\`${base}\${path}\`, {
  ...init, headers: { authorization: \`Bearer \${process.env.MEDIAD_KEY}\`, 'content-type': 'application/json', ...init.headers },
}).then((r) => r.json());
const { data: file } = await api('/files', { method: 'POST', body: JSON.stringify({ url: 'https://example.com/clip.mp4' }) });
console.log(file.id, file.url); // the file's delivery address
\`\`\`

**3. Run a task** on it: a 720p WebM, say. The task answers \`pending\`; follow it with \`GET /tasks/{id}\` (its \`progress\` moves) or give a \`webhook_url\`:

\`\`\`sh
${curl} -H 'Content-Type: application/json' \\
  -d '{"kind": "video", "file_id": "file_…", "format": "webm", "height": 720, "webhook_url": "https://you.example/hooks/mediad"}' ${base}/tasks
\`\`\`

\`\`\`js
const { data: task } = await api('/tasks', { method: 'POST', body: JSON.stringify({ kind: 'video', file_id: file.id, format: 'webm', height: 720 }) });
let done = task;
while (!['completed', 'failed', 'cancelled'].includes(done.status)) {
  await new Promise((r) => setTimeout(r, 1000));
  ({ data: done } = await api(\`/tasks/\${task.id}\`));
}
console.log(done.status, done.output?.url ?? done.error);
\`\`\`

What each kind accepts (options, formats, codecs) is \`GET /tasks-config\`. Outputs join the input's media under the task's \`ref\`, so \`GET /media/{id}\` shows them in \`urls\`.`,
    },
    {
      slug: 'webhooks',
      title: 'Receive a webhook',
      markdown: `When a task with a \`webhook_url\` ends, mediad POSTs the task to it; a webhook endpoint (\`POST /webhooks {url, events}\`) receives the project's events. Both are signed per [Standard Webhooks](https://www.standardwebhooks.com): headers \`webhook-id\`, \`webhook-timestamp\` and \`webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">\`, keyed with the secret's bytes (base64 after \`whsec_\`). Task webhooks use the project's secret (\`GET /project/webhook-secret\`), endpoints their own (shown when created). During a rotation both secrets sign, space-separated.

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
export function guideMarkdown(base: string): string {
  return guide(base)
    .map((s) => `## ${s.title}\n\n${s.markdown}`)
    .join('\n\n');
}
