import { AppError, type ErrorDetail } from './errors.js';

// Schema validation issues (Ajv's) as the API reports them: one validation_failed error naming
// every field at fault by its path, for request bodies and queries (http/) as for task options
// and workflow steps.

export interface AjvIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** "/workflow/1/next/0/width" -> "workflow[1].next[0].width" (with the missing or unknown property named). */
export function issuePath(issue: AjvIssue): string {
  let p = issue.instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
    .join('')
    .replace(/^\./, '');
  const extra = issue.params.missingProperty ?? issue.params.additionalProperty;
  if (typeof extra === 'string') p = p ? `${p}.${extra}` : extra;
  return p;
}

/** Where an issue is: query/params fields get their part as a prefix. */
function fieldPath(issue: AjvIssue, part: string | undefined): string {
  const p = issuePath(issue);
  const prefix = part === 'querystring' ? 'query' : part && part !== 'body' ? part : '';
  return [prefix, p].filter(Boolean).join('.') || prefix || 'body';
}

export function issueMessage(issue: AjvIssue): string {
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
