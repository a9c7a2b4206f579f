import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';

// The contract test: every answer the API test suite receives (through TestServer.call) is held
// to /openapi.json — the schema of its operation and status, in the document of its generation
// (the answer's Mediad-Version says which). An answer the document does not describe fails the
// test that received it: this is how the document stays true.

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

type Json = Record<string, any>;

interface Route {
  template: string;
  pattern: RegExp;
  /** Literal segments: more means more specific (/tasks-config before /tasks/{id}). */
  weight: number;
}

function compileRoutes(doc: Json): Route[] {
  return Object.keys(doc.paths ?? {})
    .map((template) => {
      const re = template
        .split('/')
        .map((seg) =>
          seg === '{path}' ? '.+' : /^\{[^}]+\}$/.test(seg) ? '[^/]+' : seg.replace(/[.*+?^$()|[\]\\-]/g, '\\$&'),
        )
        .join('/');
      return {
        template,
        pattern: new RegExp(`^${re}$`),
        weight: template.split('/').filter((s) => s && !s.startsWith('{')).length,
      };
    })
    .sort((a, b) => b.weight - a.weight);
}

export class Contract {
  private readonly ajv = addFormats(new Ajv({ strict: false, allErrors: true, validateFormats: true }));
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: Route[];

  constructor(private readonly docs: { envelope: Json; bare: Json }) {
    this.routes = compileRoutes(docs.envelope);
  }

  /** Problems of an answer against the document; [] when it matches or is not an operation's. */
  check(method: string, url: string, status: number, headers: Record<string, string>, text: string): string[] {
    const path = new URL(url, 'https://x').pathname;
    const route = this.routes.find((r) => r.pattern.test(path));
    // Not an operation: an unknown path (404) or another method on a known one (405).
    if (!route) return [];
    const generation = headers['mediad-version'] === '2025-08-20' ? 'bare' : 'envelope';
    const op = this.docs[generation].paths[route.template]?.[method.toLowerCase()];
    if (!op) return [];
    const key = op.responses[String(status)]
      ? String(status)
      : op.responses[`${String(status)[0]}XX`]
        ? `${String(status)[0]}XX`
        : 'default';
    const response = op.responses[key];
    const where = `${method} ${route.template} ${status} (${generation})`;
    if (!response) return [`${where}: the status is not documented`];
    const type = headers['content-type'] ?? '';
    if (!/^application\/json/.test(type) || !text) {
      const documented = Object.keys(response.content ?? {});
      const matches = (t: string) => t === '*/*' || type.startsWith(t.split(';')[0]!);
      if (documented.length > 0 && !documented.some(matches) && method !== 'HEAD' && status !== 304)
        return [`${where}: content-type ${type || '(none)'} is not documented (${documented.join(', ')})`];
      return [];
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return [`${where}: a JSON body is not documented`];
    const id = `${generation} ${route.template} ${method} ${key}`;
    let validate = this.validators.get(id);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(id, validate);
    }
    if (validate(JSON.parse(text))) return [];
    return [`${where}: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}`];
  }
}
