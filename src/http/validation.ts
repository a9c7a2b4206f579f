import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { AppError, type ErrorDetail } from '../errors.js';

// Bodies are validated strictly: a string "10" is not the number 10 and unknown
// properties are reported, not dropped. Query strings arrive as text, so there
// numbers are coerced.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes: coerce ? 'array' : false, useDefaults: true, removeAdditional: false, strict: false });
  return addFormats(ajv);
}

const strict = makeAjv(false);
const coercing = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

export interface AjvIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** "/workflow/1/next/0/width" -> "workflow[1].next[0].width"; query/params fields get their part as a prefix. */
function fieldPath(issue: AjvIssue, part: string | undefined): string {
  let p = issue.instancePath.split('/').filter(Boolean).map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('').replace(/^\./, '');
  const extra = (issue.params.missingProperty ?? issue.params.additionalProperty) as string | undefined;
  if (extra) p = p ? `${p}.${extra}` : extra;
  const prefix = part === 'querystring' ? 'query' : part && part !== 'body' ? part : '';
  return [prefix, p].filter(Boolean).join('.') || (prefix || 'body');
}

function issueMessage(issue: AjvIssue): string {
  if (issue.keyword === 'additionalProperties') return 'is not a known property';
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'enum') return `must be one of ${(issue.params.allowedValues as unknown[]).join(', ')}`;
  return issue.message ?? 'is invalid';
}

/** One validation_failed error naming every field at fault. */
export function validationFailed(issues: AjvIssue[], part?: string): AppError {
  const details: ErrorDetail[] = issues.map((i) => ({ field: fieldPath(i, part), message: issueMessage(i) }));
  const summary = details.map((d) => `${d.field} ${d.message}`).join('; ');
  return new AppError('validation_failed', `the request is not valid: ${summary}`, { details });
}
