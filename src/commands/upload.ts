import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';

// `mediad upload FILE`: a file from this machine into mediad, as a client does it — over HTTPS
// with an API key (MEDIAD_API_KEY or --key), trusting the local CA, to the project's upload route
// (PUT /d/<project>/<folder>/<name>, the project found with GET /project) — and what to run next.
// The server's own private-address guard never applies: the bytes come from here.

export interface UploadOptions {
  file: string;
  base: string;
  key: string;
  /** PEM of the CA to trust (the local CA), or null for the system's. */
  ca: string | null;
  /** The CA file as snippets name it, for the printed next step. */
  caFile: string | null;
  folder: string;
  filename?: string;
}

export class UploadError extends Error {}

interface Answer {
  status: number;
  body: { data?: Record<string, unknown> | null; error?: { code: string; message: string } | null };
}

function call(
  o: UploadOptions,
  method: string,
  urlPath: string,
  body?: NodeJS.ReadableStream,
  size?: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${o.base}${urlPath}`,
      {
        method,
        ...(o.ca ? { ca: o.ca } : {}),
        headers: {
          authorization: `Bearer ${o.key}`,
          accept: 'application/json',
          ...(size !== undefined ? { 'content-length': size } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] });
          } catch {
            reject(new UploadError(`${o.base} answered ${res.statusCode} without JSON: is it mediad?`));
          }
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        new UploadError(
          err.code === 'ECONNREFUSED'
            ? `nothing answers at ${o.base}: start mediad (npm start), or pass --url`
            : /certificate|self[- ]signed/i.test(err.message)
              ? `${o.base}'s certificate is not trusted (${err.message}): pass --ca with its CA file`
              : `${o.base}: ${err.message}`,
        ),
      ),
    );
    if (body) body.pipe(req);
    else req.end();
  });
}

function fail(a: Answer, what: string): never {
  const e = a.body.error;
  throw new UploadError(`${what}: ${a.status} ${e ? `${e.code}: ${e.message}` : 'no reason given'}`);
}

export async function upload(o: UploadOptions): Promise<Record<string, unknown>> {
  const size = (await stat(o.file).catch(() => null))?.size;
  if (size === undefined) throw new UploadError(`no file ${o.file}`);
  const project = await call(o, 'GET', '/project');
  if (project.status !== 200 || !project.body.data) fail(project, 'the key is refused');
  const name = encodeURIComponent(o.filename ?? path.basename(o.file));
  const folder = o.folder
    .split('/')
    .filter(Boolean)
    .map((s) => encodeURIComponent(s))
    .join('/');
  const target = `/d/${String(project.body.data.id)}/${folder ? `${folder}/` : ''}${name}`;
  const put = await call(o, 'PUT', target, createReadStream(o.file), size);
  if (put.status !== 201 || !put.body.data) {
    if (put.body.error?.code === 'file_conflict')
      throw new UploadError(`${put.body.error.message}: pass --filename <another name>, or --folder <another folder>`);
    fail(put, `uploading ${o.file}`);
  }
  return put.body.data;
}

/** What the upload made, and the next command: a task on the file. */
export function describeUpload(o: UploadOptions, file: Record<string, unknown>): string {
  const facts = [
    file.type,
    file.width && file.height ? `${String(file.width)}×${String(file.height)}` : null,
    typeof file.duration === 'number' ? `${file.duration.toFixed(1)} s` : null,
  ].filter(Boolean);
  const curl = `curl${o.caFile ? ` --cacert ${o.caFile}` : ''} -H "Authorization: Bearer $MEDIAD_API_KEY"`;
  return [
    `uploaded ${o.file}: ${String(file.id)} (${facts.join(', ')}) in media ${String(file.media_id)}`,
    `  ${String(file.url)}`,
    '',
    'Next, a task on it, e.g. a 640 px WebP poster:',
    `  ${curl} -H 'Content-Type: application/json' \\`,
    `    -d '{"kind": "image", "file_id": "${String(file.id)}", "width": 640, "format": "webp"}' ${o.base}/tasks`,
    '',
  ].join('\n');
}

export async function readCa(caFile: string | null): Promise<string | null> {
  return caFile ? readFile(caFile, 'utf8') : null;
}
