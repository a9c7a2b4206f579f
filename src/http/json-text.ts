import { JsonText } from '../db/renderers.js';

// JSON text made where the rows are read (a renderer on the SQLite reader thread, db/hot-reads.ts)
// and written into the answer as it is: the one place it is spliced into an envelope.

export { JsonText };

/** The shape a body holding JsonText members has once serialised (what its schema describes). */
export type Serialised<B> = { [K in keyof B]: B[K] extends JsonText<infer T> ? T : B[K] };

/** For a nativeJson route's handler: its body, typed as what the client receives. */
export const asSerialised = <B>(body: B) => body as unknown as Serialised<B>;

/**
 * Route option for hot reads whose bodies are built field by field by the representation
 * functions (never a database row passed through): they are serialised by V8's JSON.stringify.
 * fast-json-stringify concatenates hundreds of small strings per list page into a rope that
 * is flattened again when written, which on GET /files?limit=20 cost more CPU and young-
 * generation garbage than the database read. The response schema still documents the shape,
 * and test/unit/native-json.test.ts holds these bodies to exactly what the schema allows.
 */
export const nativeJson = { serializerCompiler: () => nativeStringify, config: { nativeJson: true } };

/** JSON.stringify, with an envelope's data written as it is when it is already JSON text. */
function nativeStringify(body: unknown): string {
  const data = (body as { data?: unknown } | null)?.data;
  if (!(data instanceof JsonText)) return JSON.stringify(body);
  // Member by member, in the envelope's order; undefined members are left out as JSON.stringify does.
  let out = '';
  for (const [k, v] of Object.entries(body as object)) {
    if (v === undefined) continue;
    out += `${out ? ',' : '{'}${JSON.stringify(k)}:${v === data ? data.text : JSON.stringify(v)}`;
  }
  return out ? `${out}}` : '{}';
}
