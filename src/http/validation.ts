import { Ajv, type ValidateFunction } from 'ajv';

/** Ajv's second argument to a validator: the parent object, so a coerced root value can be written back. */
type DataValidationCxt = Parameters<ValidateFunction>[1];
import addFormatsImport from 'ajv-formats';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';

// Bodies are validated strictly: a string "10" is not the number 10 and unknown
// properties are reported, not dropped. Query strings arrive as text, so there
// numbers are coerced.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  // strictNumbers: Infinity and NaN are not numbers here ("?page=Infinity" coerces to Infinity,
  // which the default accepts as an integer and SQLite then refuses with a 500).
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    strictNumbers: true,
  });
  return addFormats(ajv);
}

const strict = makeAjv(false);
const coercing = makeAjv(true);

/** A query integer as people write one: optional minus, decimal digits, nothing else. */
const DECIMAL_INTEGER = /^-?\d{1,16}$/;

/** What a validator compiler returns (Fastify does not export the type by name). */
type FastifyValidationResult = ReturnType<FastifySchemaCompiler<unknown>>;
/** A validator that takes Ajv's second argument (the parent object, so a coerced root value can be written back). */
type Validate = ((data: unknown, cxt?: DataValidationCxt) => boolean) & Pick<FastifyValidationResult, 'errors'>;

function integerProperties(schema: unknown): string[] {
  if (!schema || typeof schema !== 'object' || !('properties' in schema)) return [];
  const props = schema.properties;
  if (!props || typeof props !== 'object') return [];
  return Object.entries(props)
    .filter(([, s]) => s && typeof s === 'object' && 'type' in s && s.type === 'integer')
    .map(([k]) => k);
}

/**
 * Ajv's coercion reads a query string the way JavaScript's Number() does, so "0x10", "1e3",
 * " 5" and "5.0" became integers (and "1e20" a page far past SQLite's range). An integer
 * parameter of the query must be written in decimal digits; anything else is named at fault.
 */
function decimalQueryIntegers(schema: unknown, validate: ValidateFunction): Validate {
  const keys = integerProperties(schema);
  if (keys.length === 0) return validate;
  // Runs on every list request (GET /files is the hot path): nothing is allocated unless a value is bad.
  const wrapped: Validate = (data: unknown, cxt?: DataValidationCxt) => {
    let bad: string[] | null = null;
    if (data !== null && typeof data === 'object') {
      for (const k of keys) {
        const v: unknown = Reflect.get(data, k);
        if (typeof v === 'string' && !DECIMAL_INTEGER.test(v)) (bad ??= []).push(k);
      }
    }
    const ok = validate(data, cxt);
    if (bad === null) {
      wrapped.errors = validate.errors;
      return ok;
    }
    const own: FastifySchemaValidationError[] = bad.map((k) => ({
      keyword: 'type',
      instancePath: `/${k}`,
      schemaPath: `#/properties/${k}/type`,
      params: { type: 'integer' },
      message: 'must be a whole number written in decimal digits',
    }));
    const others = (validate.errors ?? []).filter(
      (e: FastifySchemaValidationError) => !bad.includes(e.instancePath.split('/')[1] ?? ''),
    );
    wrapped.errors = [...own, ...others];
    return false;
  };
  return wrapped;
}

function compile(schema: unknown, httpPart: string | undefined): Validate {
  const ajv = httpPart === 'body' ? strict : coercing;
  const validate = ajv.compile(schema as object);
  return httpPart === 'querystring' ? decimalQueryIntegers(schema, validate) : validate;
}

/**
 * Ajv compiles a route's validator at its first request, not at start: compiling the ~300
 * request schemas (each GET twice, for its HEAD route) was a third of `mediad serve`'s start-up
 * CPU and kept their code in memory whether the route was ever called (bench/startup.ts).
 * The wrapper costs a call per request; Ajv's second argument (the parent object, so a coerced
 * root value can be written back) is passed on as Fastify passes it to Ajv's own functions.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  let compiled: Validate | null = null;
  const validate = (data: unknown, cxt?: DataValidationCxt) => {
    compiled ??= compile(schema, httpPart);
    const ok = compiled(data, cxt);
    if (!ok) lazy.errors = compiled.errors;
    return ok;
  };
  // Fastify passes the parent object only to functions that carry Ajv's schemaEnv.
  const lazy: FastifyValidationResult = Object.assign(validate, { schemaEnv: true });
  return lazy;
};

export { validationFailed, type AjvIssue } from '../validation-errors.js';
