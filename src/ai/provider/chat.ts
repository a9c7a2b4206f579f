// OpenAI-compatible chat completions with structured output: the JSON schema is sent as
// `response_format: {type: "json_schema", …}` and the answer is checked against it with ajv
// (providers that ignore response_format still get caught).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { EngineInfo } from '../engine.js';
import { ProviderError } from '../errors.js';
import { providerRequest, type ProviderEndpoint } from './client.js';

export type ContentPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: 'low' | 'high' | 'auto' } };

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ContentPart[];
}

export interface StructuredOutput<T> {
  /** `json_schema.name`: letters, digits, _ and -. */
  name: string;
  schema: Record<string, unknown>;
  /** OpenAI strict mode: every property required, no additional properties. */
  strict: boolean;
  /** Compiled on first use (module load stays cheap); after a false, `lastErrors()` says why. */
  validate(value: unknown): value is T;
  lastErrors(): string;
}

// One Ajv per schema: Ajv keeps every schema it compiled, so a shared instance would grow
// with each caller-supplied schema (the prompt kind's) for the life of the process.
const newAjv = () => new Ajv({ allErrors: true, strict: false });

/** Compiles a schema once; `T` is what a valid answer is. Throws on a schema ajv cannot compile. */
export function structuredOutput<T>(name: string, schema: Record<string, unknown>, strict = true): StructuredOutput<T> {
  let compiled: ValidateFunction<T> | null = null;
  const fn = (): ValidateFunction<T> => (compiled ??= newAjv().compile<T>(schema));
  return {
    name,
    schema,
    strict,
    validate: (value: unknown): value is T => fn()(value),
    lastErrors: () => describeAjvErrors(fn().errors),
  };
}

/** A compiled-on-first-use validator for provider answers that are not chat outputs. */
export function lazyValidator<T>(schema: Record<string, unknown>): {
  validate(value: unknown): value is T;
  lastErrors(): string;
} {
  const out = structuredOutput<T>('check', schema, false);
  return { validate: out.validate, lastErrors: out.lastErrors };
}

/** Problems with a caller-supplied JSON schema (empty when usable), e.g. for the prompt kind's option. */
export function schemaProblems(schema: unknown): string[] {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return ['must be a JSON schema object'];
  if ('type' in schema && schema.type !== 'object') return ['must describe an object ("type": "object")'];
  try {
    newAjv().compile(schema);
    return [];
  } catch (err) {
    return [err instanceof Error ? err.message : String(err)];
  }
}

export function describeAjvErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 3)
    .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`)
    .join('; ');
}

export interface ChatRequest<T> {
  model: string;
  messages: ChatMessage[];
  output: StructuredOutput<T>;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface ChatResult<T> {
  value: T;
  engine: EngineInfo;
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
}

interface ChatAnswer {
  model?: unknown;
  usage?: unknown;
  choices?: { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }[];
}

function isChatAnswer(v: unknown): v is ChatAnswer {
  return typeof v === 'object' && v !== null && (!('choices' in v) || Array.isArray(v.choices));
}

/** The request body, exported so tests and logs can see exactly what is sent. */
export function chatBody<T>(req: ChatRequest<T>): Record<string, unknown> {
  return {
    model: req.model,
    messages: req.messages,
    response_format: {
      type: 'json_schema',
      json_schema: { name: req.output.name, schema: req.output.schema, strict: req.output.strict },
    },
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
  };
}

function usageOf(raw: unknown): ChatResult<unknown>['usage'] {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const out: NonNullable<ChatResult<unknown>['usage']> = {};
  for (const key of ['prompt_tokens', 'completion_tokens', 'total_tokens'] as const) {
    const v: unknown = key in raw ? Reflect.get(raw, key) : undefined;
    if (typeof v === 'number') out[key] = v;
  }
  return out;
}

export async function chatStructured<T>(ep: ProviderEndpoint, req: ChatRequest<T>): Promise<ChatResult<T>> {
  const answer = await providerRequest(ep, 'POST', '/chat/completions', { json: chatBody(req) }, req.signal);
  const at = 'POST /chat/completions';
  if (!isChatAnswer(answer))
    throw new ProviderError(`the provider answered 200 to ${at} with JSON that is not a chat completion`, true, 200);
  const message = answer.choices?.[0]?.message;
  if (typeof message?.refusal === 'string' && message.refusal) {
    throw new ProviderError(`the model refused to answer: ${message.refusal.slice(0, 300)}`, false, 200);
  }
  const content = message?.content;
  if (typeof content !== 'string')
    throw new ProviderError(`the provider answered 200 to ${at} without message content`, true, 200);
  let parsed: unknown;
  try {
    // Some servers wrap JSON in a Markdown fence even in JSON mode.
    parsed = JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch (err) {
    throw new ProviderError(
      `the provider answered 200 to ${at} with content that is not JSON (finish_reason ${String(answer.choices?.[0]?.finish_reason)})`,
      true,
      200,
      undefined,
      { cause: err },
    );
  }
  if (!req.output.validate(parsed)) {
    throw new ProviderError(
      `the provider answered 200 to ${at} with JSON that does not match the ${req.output.name} schema: ${req.output.lastErrors()}`,
      true,
      200,
    );
  }
  const usage = usageOf(answer.usage);
  return {
    value: parsed,
    engine: {
      name: 'openai-compatible',
      model: typeof answer.model === 'string' && answer.model ? answer.model : req.model,
      version: null,
    },
    ...(usage ? { usage } : {}),
  };
}
