import { EXAMPLE_FILE_ID, EXAMPLE_MEDIA_ID } from './task-bodies.js';

// The examples /docs shows for each operation (`x-codeSamples`): curl and Node.js that run as
// copied against this server — its address, `--cacert` / NODE_EXTRA_CA_CERTS with its local CA
// (none with a certificate of one's own), the key from $MEDIAD_API_KEY, path parameters from
// shell variables named after them ($FILE_ID …), and the operation's example body. Scalar's own
// generated clients are hidden (routes.ts): they know nothing of the local CA.

type Json = Record<string, unknown>;

export interface SampleContext {
  base: string;
  /** The CA file clients pass (tls/ca-file.ts), or null when the certificate is publicly trusted. */
  caFile: string | null;
}

const SINGULAR: Record<string, string> = { media: 'MEDIA', deliveries: 'DELIVERY' };

/** `{id}` after `/files` is $FILE_ID; `{delivery_id}` is $DELIVERY_ID; `{path}` is the upload's place. */
function variableOf(segments: string[], index: number): string {
  const name = segments[index]!.slice(1, -1);
  if (name === 'path') return 'MEDIAD_PROJECT/uploads/clip.mp4';
  if (name !== 'id') return name.toUpperCase();
  const owner = segments[index - 1] ?? '';
  return `${SINGULAR[owner] ?? owner.replace(/s$/, '').toUpperCase()}_ID`;
}

/** The path with shell variables: `/files/$FILE_ID`, and the names used. */
function shellPath(path: string): { shell: string; js: string } {
  const segments = path.split('/');
  const shell: string[] = [];
  const js: string[] = [];
  segments.forEach((seg, i) => {
    if (!/^\{.+\}$/.test(seg)) {
      shell.push(seg);
      js.push(seg);
      return;
    }
    const v = variableOf(segments, i);
    if (v.includes('/')) {
      const [first, ...rest] = v.split('/');
      shell.push(`$${first}/${rest.join('/')}`);
      js.push(`\${process.env.${first}}/${rest.join('/')}`);
    } else {
      shell.push(`$${v}`);
      js.push(`\${process.env.${v}}`);
    }
  });
  return { shell: shell.join('/'), js: js.join('/') };
}

type Auth = 'none' | 'key' | 'session';

function authOf(op: Json): Auth {
  const security = op.security as Json[] | undefined;
  if (security === undefined) return 'key';
  if (security.length === 0) return 'none';
  return security.some((s) => 'apiKey' in s) ? 'key' : 'session';
}

const quoteShell = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Ids in examples that the samples read from variables instead, so they run as copied. */
const PLACEHOLDERS: Record<string, string> = { [EXAMPLE_FILE_ID]: 'FILE_ID', [EXAMPLE_MEDIA_ID]: 'MEDIA_ID' };

/** A JSON body for the shell: single-quoted, with the placeholder ids as "$FILE_ID" … */
function shellBody(body: unknown): string {
  let quoted = quoteShell(JSON.stringify(body));
  for (const [id, variable] of Object.entries(PLACEHOLDERS))
    quoted = quoted.replaceAll(`"${id}"`, `"'"$${variable}"'"`);
  return quoted;
}

/** A JSON body for Node.js: the placeholder ids as process.env.FILE_ID … */
function nodeBody(body: unknown): string {
  let text = JSON.stringify(body);
  for (const [id, variable] of Object.entries(PLACEHOLDERS))
    text = text.replaceAll(`"${id}"`, `process.env.${variable}`);
  return text;
}

function curlSample(ctx: SampleContext, method: string, path: string, op: Json, body: unknown): string {
  const { shell } = shellPath(path);
  const auth = authOf(op);
  const upper = method.toUpperCase();
  const lines = [`curl${ctx.caFile ? ` --cacert ${ctx.caFile}` : ''}`];
  if (path === '/auth/sign-in' || path === '/auth/setup') lines.push('-c mediad-cookies.txt');
  const upload = method === 'put' && path === '/d/{path}';
  // An upload takes a key of the project (or a signed URL) though reading files needs none.
  if (auth === 'key' || upload) lines.push('-H "Authorization: Bearer $MEDIAD_API_KEY"');
  if (auth === 'session') {
    // A session's requests carry its cookie; its writes also come from this origin with the CSRF token.
    lines.push('-b mediad-cookies.txt');
    if (upper !== 'GET') lines.push(`-H "Origin: ${ctx.base}" -H "X-CSRF-Token: $MEDIAD_CSRF_TOKEN"`);
  }
  if (upload) lines.push('-T clip.mp4');
  else if (upper === 'HEAD') lines.push('--head');
  else if (upper !== 'GET' && !(upper === 'POST' && body !== undefined)) lines.push(`-X ${upper}`);
  if (path === '/d/{path}' && upper === 'GET') lines.push('-o clip.mp4');
  if (body !== undefined) lines.push(`-H 'Content-Type: application/json' -d ${shellBody(body)}`);
  if (path === '/auth/setup' || path === '/auth/sign-in') lines.push(`-H "Origin: ${ctx.base}"`);
  lines.push(`"${ctx.base}${shell}"`);
  return lines.join(' \\\n  ');
}

function nodeSample(ctx: SampleContext, method: string, path: string, op: Json, body: unknown): string | null {
  const auth = authOf(op);
  if (auth === 'session') return null; // the web application's own calls: curl with a cookie shows them
  const { js } = shellPath(path);
  const upper = method.toUpperCase();
  const upload = upper === 'PUT' && path === '/d/{path}';
  const headers: string[] = [];
  if (auth === 'key' || upload) headers.push('Authorization: `Bearer ${process.env.MEDIAD_API_KEY}`');
  if (body !== undefined) headers.push("'Content-Type': 'application/json'");
  const init = [
    ...(upper !== 'GET' ? [`method: '${upper}'`] : []),
    ...(headers.length ? [`headers: { ${headers.join(', ')} }`] : []),
    ...(body !== undefined ? [`body: JSON.stringify(${nodeBody(body)})`] : []),
    ...(upload ? ["body: await readFile('clip.mp4')"] : []),
  ];
  const read =
    path === '/d/{path}' && upper === 'GET'
      ? "console.log(res.status, (await res.arrayBuffer()).byteLength, 'bytes');"
      : upper === 'HEAD'
        ? 'console.log(res.status, Object.fromEntries(res.headers));'
        : 'console.log(res.status, await res.text());';
  return [
    ...(ctx.caFile ? [`// Run with: NODE_EXTRA_CA_CERTS=${ctx.caFile} node example.mjs`] : []),
    ...(upload ? ["import { readFile } from 'node:fs/promises';", ''] : []),
    `const res = await fetch(\`${ctx.base}${js}\`${init.length ? `, {\n  ${init.join(',\n  ')},\n}` : ''});`,
    read,
  ].join('\n');
}

/** The example body of an operation, as the document gives it (POST /tasks: the image kind's). */
function exampleBody(op: Json): unknown {
  const json = ((op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.[
    'application/json'
  ];
  if (!json) return undefined;
  if (json.example !== undefined) return json.example;
  const examples = json.examples as Record<string, { value: unknown }> | undefined;
  return examples ? (examples.image ?? Object.values(examples)[0])?.value : undefined;
}

/** Adds curl and Node.js samples to every operation of `doc`. */
export function addCodeSamples(doc: Json, ctx: SampleContext): void {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const body = exampleBody(op);
      const node = nodeSample(ctx, method, path, op, body);
      op['x-codeSamples'] = [
        { lang: 'shell', label: 'curl', source: curlSample(ctx, method, path, op, body) },
        ...(node ? [{ lang: 'javascript', label: 'Node.js', source: node }] : []),
      ];
    }
  }
}
