// Typed failures of the intelligence engines. The task layer maps `code` to the task's error
// and uses `transient` to decide on a retry; src/errors.ts stays the only HTTP catalogue.

/** A call to an AI provider failed. `status` is the provider's HTTP status when it answered. */
export class ProviderError extends Error {
  readonly code = 'provider_failed' as const;

  constructor(
    message: string,
    /** Worth retrying later: timeouts, connection failures, 5xx, 429, malformed or off-schema answers. */
    readonly transient: boolean,
    readonly status: number | null = null,
    /** From a 429/503 Retry-After header, in milliseconds. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}

export function isProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError;
}

/** A local engine is not installed or its model files are missing: an operator problem. */
export class EngineUnavailableError extends Error {
  readonly code = 'engine_unavailable' as const;
  /** A local engine that is not installed never appears by itself. */
  readonly transient = false;

  constructor(
    readonly engine: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EngineUnavailableError';
  }
}

export function isEngineUnavailableError(err: unknown): err is EngineUnavailableError {
  return err instanceof EngineUnavailableError;
}

/** Replaces every occurrence of a secret (an API key) so it never reaches a message or a log. */
export function redactSecret(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join('[redacted]');
}
