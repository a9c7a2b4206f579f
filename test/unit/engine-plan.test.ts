// The engine choice of the intelligence kinds (kinds/engines.ts) for machines this one is not:
// local engines missing, a provider for one part only; and how provider failures are retried.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EngineUnavailableError, ProviderError, type EngineStatus } from '../../src/ai/index.js';
import { chatPlan, helperSpeech, speechPlan, type Engines } from '../../src/kinds/engines.js';
import { kindEntry } from '../../src/kinds/registry.js';
import { classifyFailure, MAX_RETRY_AFTER_MS, retryDelay } from '../../src/queue/retry.js';

const status = (engine: string, found: boolean, message?: string): EngineStatus => ({
  engine,
  found,
  version: found ? '1' : null,
  model: null,
  ...(message ? { message } : {}),
});

function engines(over: Partial<Engines> & { missing?: string[] } = {}): Engines {
  const missing = new Set(over.missing ?? []);
  const local = (name: string, hint: string) => status(name, !missing.has(name), missing.has(name) ? hint : undefined);
  return {
    chatModel: over.chatModel ?? null,
    transcribeModel: over.transcribeModel ?? null,
    local: {
      speech: local(
        'pocketsphinx',
        'pocketsphinx_continuous not found: apt-get install -y pocketsphinx pocketsphinx-en-us',
      ),
      ocr: local('tesseract', 'tesseract not found: apt-get install -y tesseract-ocr tesseract-ocr-eng'),
      nsfw: local('nsfwjs', 'npm packages missing (nsfwjs/models/mobilenet_v2): run npm install'),
      scenes: local('ffmpeg-scdet', 'no scdet'),
    },
  };
}

describe('engine choice', () => {
  it('speech: the provider when configured, else pocketsphinx, else a refusal naming both ways', () => {
    assert.deepEqual(speechPlan('speech', undefined, engines({ transcribeModel: 'whisper-1' })), { plan: 'provider' });
    assert.deepEqual(speechPlan('speech', undefined, engines()), { plan: 'local' });
    assert.deepEqual(speechPlan('speech', 'local', engines({ transcribeModel: 'w' })), { plan: 'local' });
    const none = speechPlan('speech', undefined, engines({ missing: ['pocketsphinx'] }));
    assert.ok('refused' in none);
    assert.match(none.refused, /apt-get install -y pocketsphinx pocketsphinx-en-us.*MEDIAD_AI_TRANSCRIBE_MODEL/);
    const local = speechPlan('subtitles', 'local', engines({ missing: ['pocketsphinx'], transcribeModel: 'w' }));
    assert.ok('refused' in local && /subtitles with engine "local" cannot run: .*apt-get/.test(local.refused));
    // A chat model is no speech provider.
    const chatOnly = speechPlan('speech', 'provider', engines({ chatModel: 'gpt' }));
    assert.ok('refused' in chatOnly && /MEDIAD_AI_TRANSCRIBE_MODEL/.test(chatOnly.refused));
    assert.deepEqual(speechPlan('speech', undefined, engines({ transcribeModel: 'w' }), 'fr'), { plan: 'provider' });
  });

  it('chat kinds: the provider when configured, else local when it can run, else refused', () => {
    assert.deepEqual(chatPlan('description', undefined, engines({ chatModel: 'gpt' }), null), { plan: 'provider' });
    assert.deepEqual(chatPlan('description', undefined, engines(), null), { plan: 'local' });
    const prompt = chatPlan('prompt', undefined, engines({ transcribeModel: 'w' }), 'no local engine');
    assert.ok('refused' in prompt && /MEDIAD_AI_BASE_URL and MEDIAD_AI_CHAT_MODEL/.test(prompt.refused));
    const nsfw = kindEntry('nsfw')!.plan({}, engines({ missing: ['nsfwjs'] }));
    assert.ok(nsfw && 'refused' in nsfw && /npm install/.test(nsfw.refused));
    assert.deepEqual(kindEntry('nsfw')!.plan({}, engines({ missing: ['nsfwjs'], chatModel: 'v' })), {
      plan: 'provider',
    });
    // Helpers do without speech rather than refuse; `local` keeps them off the provider.
    assert.equal(helperSpeech(undefined, engines({ missing: ['pocketsphinx'] })), null);
    assert.equal(helperSpeech('local', engines({ transcribeModel: 'w' })), 'local');
    assert.equal(helperSpeech(undefined, engines({ transcribeModel: 'w' })), 'provider');
    assert.equal(kindEntry('video')!.plan({}, engines()), null, 'transform kinds use no engine');
  });
});

describe('provider failures in the retry policy', () => {
  const policy = { maxAttempts: 4, backoffMs: 10_000, timeoutMs: 1 };

  it('retries what the provider marks transient, waits out Retry-After when longer, never retries a missing engine', () => {
    const busy = classifyFailure(new ProviderError('answered 429', true, 429, 30_000));
    assert.deepEqual(busy, { code: 'provider_failed', message: 'answered 429', transient: true, retryAfterMs: 30_000 });
    assert.equal(
      retryDelay(policy, 1, busy, () => 0.5),
      30_000,
    );
    assert.equal(
      retryDelay(policy, 3, busy, () => 0.5),
      40_000,
      'the backoff when it is the longer',
    );
    const forever = classifyFailure(new ProviderError('x', true, 503, 10 * 86_400_000));
    assert.equal(forever.retryAfterMs, MAX_RETRY_AFTER_MS);
    assert.equal(classifyFailure(new ProviderError('401', false, 401)).transient, false);
    const missing = classifyFailure(new EngineUnavailableError('pocketsphinx', 'install it'));
    assert.deepEqual(missing, { code: 'engine_unavailable', message: 'install it', transient: false });
  });
});
