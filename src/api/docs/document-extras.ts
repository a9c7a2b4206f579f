import { addCodeSamples, type SampleContext } from './code-samples.js';
import { documentRequestExamples } from './request-examples.js';
import { documentTaskBodies } from './task-bodies.js';

// What /openapi.json adds to what @fastify/swagger makes of the routes' schemas: POST /tasks per
// kind, an example of every request body, the upload's raw body, and runnable code samples.

type Json = Record<string, unknown>;

/** PUT /d/{path} takes the file's bytes as they are (the route reads the raw stream). */
function documentUploadBody(doc: Json): void {
  const put = (doc.paths as Record<string, Record<string, Json>> | undefined)?.['/d/{path}']?.put;
  if (!put || put.requestBody) return;
  put.requestBody = {
    required: true,
    description:
      'The file’s bytes, as they are (`curl -T clip.mp4 …`). The type is read from the bytes; `Content-Type` is ignored.',
    content: {
      'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
    },
  };
}

export function finishDocument<D extends object>(doc: D, ctx: SampleContext): D {
  const json = doc as Json;
  documentTaskBodies(json);
  documentRequestExamples(json);
  documentUploadBody(json);
  addCodeSamples(json, ctx);
  return doc;
}
