import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import type { AiPorts, KindInput, ProviderModel } from '../kinds/define.js';
import { enginesOf } from '../kinds/engines.js';
import { createGuardedClient, type GuardedClient } from '../net/index.js';
import { storedSpeechDocument } from '../services/media/intelligence.js';
import { USER_AGENT } from '../package-info.js';

/** Largest answer read from a provider (a long transcript in verbose_json is a few MB). */
const PROVIDER_MAX_BYTES = 64 * 1024 * 1024;
/**
 * The client's idle limit without a configured time limit: the longest default wait of a call,
 * a 10-minute transcription chunk (120 s + its length). Each call has its own deadline besides.
 */
const DEFAULT_IDLE_MS = 12 * 60 * 1000;

/** What a worker pool's tasks know of the engines, built once per pool. */
export class AiEngines {
  /**
   * The provider's own guarded client: the default one gives up after 30 s without a byte, and
   * a model server may think for minutes before it answers; here idle = the provider time limit.
   */
  private readonly client: GuardedClient | null;
  private readonly chat: ProviderModel | null;
  private readonly transcribe: ProviderModel | null;

  constructor(private readonly deps: Deps) {
    const ai = deps.config.ai;
    this.client =
      ai.chat || ai.transcribe
        ? createGuardedClient({
            ...deps.config.fetch,
            idleTimeoutMs: ai.timeoutMs ?? DEFAULT_IDLE_MS,
            totalTimeoutMs: Math.max(deps.config.fetch.totalTimeoutMs, ai.timeoutMs ?? DEFAULT_IDLE_MS),
            maxBytes: PROVIDER_MAX_BYTES,
            userAgent: USER_AGENT,
          })
        : null;
    this.chat = this.model(ai.chat);
    this.transcribe = this.model(ai.transcribe);
  }

  private model(ep: Config['ai']['chat']): ProviderModel | null {
    if (!ep || !this.client) return null;
    const { apiKey, timeoutMs } = this.deps.config.ai;
    return {
      model: ep.model,
      endpoint: {
        baseUrl: ep.baseUrl,
        request: this.client.request,
        ...(timeoutMs !== null ? { timeoutMs } : {}),
        ...(apiKey ? { apiKey } : {}),
      },
    };
  }

  /** The ports of one task on `input`. */
  ports(input: KindInput | null): AiPorts {
    return {
      chat: this.chat,
      transcribe: this.transcribe,
      engines: () => enginesOf(this.deps.config),
      storedSpeech: async () => (input ? storedSpeechDocument(this.deps, input.file) : null),
    };
  }

  private closing: Promise<void> | undefined;

  close(): Promise<void> {
    this.closing ??= this.client?.close() ?? Promise.resolve();
    return this.closing;
  }
}
