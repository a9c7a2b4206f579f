// The OpenAI-compatible chat client against a loopback server speaking the real protocol,
// through mediad's SSRF-guarded outbound client: what is sent, and how failures come back.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createGuardedClient, type GuardedClient, type UrlPolicy } from '../../src/net/index.js';
import {
  chatStructured,
  DESCRIPTION_OUTPUT,
  descriptionIntelligence,
  descriptionMessages,
  imageUrl,
  isProviderError,
  listModels,
  normalizeOutline,
  OUTLINE_OUTPUT,
  outlineMessages,
  PROMPT_OUTPUT,
  promptMessages,
  promptOutput,
  promptSchemaProblems,
  providerStatus,
  ProviderError,
  type ProviderEndpoint,
} from '../../src/ai/index.js';
import { fixture } from '../helpers/fixtures.js';
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.js';

const KEY = 'sk-test-0123456789abcdef';
let server: OpenAiServer;
let client: GuardedClient;
let ep: ProviderEndpoint;

function policy(allowHosts: string[]): UrlPolicy {
  return {
    allowPrivate: false,
    allowHosts,
    maxRedirects: 0,
    connectTimeoutMs: 2000,
    idleTimeoutMs: 5000,
    totalTimeoutMs: 10_000,
    maxBytes: 64 * 1024 * 1024,
    userAgent: 'mediad-test/1',
  };
}

before(async () => {
  server = await startOpenAiServer();
  // As an operator would: the provider's loopback host is allowed explicitly.
  client = createGuardedClient(policy([server.host]));
  ep = { baseUrl: server.baseUrl, apiKey: KEY, request: client.request, timeoutMs: 5000 };
});
after(async () => {
  await client?.close();
  await server?.close();
});
beforeEach(() => {
  server.requests.length = 0;
  server.script.clear();
});

async function providerError(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => assert.fail('expected a ProviderError'),
    (e: unknown) => e,
  );
  assert.ok(isProviderError(err), String(err));
  assert.equal(err.code, 'provider_failed');
  assert.ok(!err.message.includes(KEY), `the key leaked: ${err.message}`);
  return err;
}

describe('chatStructured', () => {
  it('sends the model, the bearer key, images as data URLs and the JSON schema; validates the answer', async () => {
    server.chatContent = JSON.stringify({
      title: 'Test pattern',
      description: 'Coloured bars.',
      tags: ['Test', 'bars', 'test'],
    });
    const image = await imageUrl(await fixture('image-jpeg'));
    const res = await chatStructured(ep, {
      model: 'vision-mini',
      output: DESCRIPTION_OUTPUT,
      messages: descriptionMessages({ kind: 'image', filename: 'bars.jpg', images: [image] }),
    });
    assert.deepEqual(res.value, {
      title: 'Test pattern',
      description: 'Coloured bars.',
      tags: ['Test', 'bars', 'test'],
    });
    assert.deepEqual(res.engine, { name: 'openai-compatible', model: 'vision-mini', version: null });
    assert.deepEqual(res.usage, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    assert.deepEqual(descriptionIntelligence(res.value, res.engine).tags, ['test', 'bars']);

    const [req] = server.requests;
    assert.equal(req!.path, '/v1/chat/completions');
    assert.equal(req!.headers.authorization, `Bearer ${KEY}`);
    const body = req!.json as Record<string, any>;
    assert.equal(body.model, 'vision-mini');
    assert.deepEqual(body.response_format, {
      type: 'json_schema',
      json_schema: { name: 'description', schema: DESCRIPTION_OUTPUT.schema, strict: true },
    });
    const parts = body.messages.at(-1).content as { type: string; image_url?: { url: string } }[];
    const images = parts.filter((p) => p.type === 'image_url');
    assert.equal(images.length, 1);
    assert.match(images[0]!.image_url!.url, /^data:image\/jpeg;base64,\/9j\//);
  });

  it('sends video frames with their times and the transcript for an outline; keeps times inside the media', async () => {
    server.chatContent = JSON.stringify({
      timeline: [
        { title: 'Outro', start: 8, end: 99 },
        { title: 'Intro', start: 0, end: 9 },
      ],
    });
    const res = await chatStructured(ep, {
      model: 'vision-mini',
      output: OUTLINE_OUTPUT,
      messages: outlineMessages({
        kind: 'video',
        duration: 10,
        transcript: [{ start: 0, end: 4, text: 'hello there' }],
        images: [{ time: 5, url: 'data:image/jpeg;base64,AAAA' }],
      }),
    });
    assert.deepEqual(normalizeOutline(res.value, 10), [
      { title: 'Intro', start: 0, end: 9 },
      { title: 'Outro', start: 9, end: 10 },
    ]);
    const text = JSON.stringify((server.requests[0]!.json as Record<string, any>).messages);
    assert.match(text, /\[00:00:00\] hello there/);
    assert.match(text, /Frame at 00:00:05/);
  });

  it('uses the caller schema for a prompt, not strict, and checks the answer against it', async () => {
    const schema = { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } };
    assert.deepEqual(promptSchemaProblems(schema), []);
    assert.ok(promptSchemaProblems({ type: 'object', properties: { a: { type: 'nonsense' } } }).length > 0);
    assert.ok(promptSchemaProblems({ type: 'array' }).length > 0);
    server.chatContent = '{"count": 3}';
    const res = await chatStructured(ep, {
      model: 'm',
      output: promptOutput(schema),
      messages: promptMessages('How many bars?', { kind: 'image' }),
    });
    assert.deepEqual(res.value, { count: 3 });
    assert.deepEqual((server.requests[0]!.json as Record<string, any>).response_format.json_schema, {
      name: 'answer',
      schema,
      strict: false,
    });
    server.chatContent = '{"answer": "Seven."}';
    assert.deepEqual(
      (
        await chatStructured(ep, {
          model: 'm',
          output: PROMPT_OUTPUT,
          messages: promptMessages('?', { kind: 'audio' }),
        })
      ).value,
      { answer: 'Seven.' },
    );
  });
});

describe('provider failures', () => {
  const ask = (over: Partial<ProviderEndpoint> = {}, signal?: AbortSignal) =>
    chatStructured(
      { ...ep, ...over },
      { model: 'm', output: PROMPT_OUTPUT, messages: [{ role: 'user', content: 'hi' }], signal },
    );

  it('a timeout is transient, without a status', async () => {
    server.script.set('/v1/chat/completions', [{ delayMs: 1500, body: {} }]);
    const err = await providerError(ask({ timeoutMs: 300 }));
    assert.equal(err.transient, true);
    assert.equal(err.status, null);
    assert.match(err.message, /did not answer .* within/);
  });

  it('a 500 is transient and named in the message', async () => {
    server.script.set('/v1/chat/completions', [{ status: 500, body: { error: { message: 'upstream overloaded' } } }]);
    const err = await providerError(ask());
    assert.deepEqual([err.transient, err.status], [true, 500]);
    assert.match(err.message, /answered 500 Internal Server Error .*: upstream overloaded/);
  });

  it('a 429 is transient and carries Retry-After', async () => {
    server.script.set('/v1/chat/completions', [
      { status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'slow down' } } },
    ]);
    const err = await providerError(ask());
    assert.deepEqual([err.transient, err.status, err.retryAfterMs], [true, 429, 7000]);
    assert.match(err.message, /429/);
  });

  it('malformed JSON is transient', async () => {
    server.script.set('/v1/chat/completions', [{ status: 200, body: '{"choices": [' }]);
    const err = await providerError(ask());
    assert.deepEqual([err.transient, err.status], [true, 200]);
    assert.match(err.message, /answered 200 .*malformed JSON/);
  });

  it('JSON that does not match the schema is transient', async () => {
    server.chatContent = '{"reply": "hi"}';
    const err = await providerError(ask());
    assert.equal(err.transient, true);
    assert.match(err.message, /answered 200 .*does not match the answer schema: .*answer/);
    server.chatContent = 'Sure! Here you go.';
    assert.match((await providerError(ask())).message, /not JSON/);
  });

  it('a 401 is permanent and never repeats the key the provider echoes', async () => {
    server.script.set('/v1/chat/completions', [
      { status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}.` } } },
    ]);
    const err = await providerError(ask());
    assert.deepEqual([err.transient, err.status], [false, 401]);
    assert.match(err.message, /\[redacted\].*check the provider API key/);
  });

  it('a refusal is permanent', async () => {
    server.script.set('/v1/chat/completions', [
      { body: { choices: [{ message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' } }] } },
    ]);
    const err = await providerError(ask());
    assert.equal(err.transient, false);
    assert.match(err.message, /refused/);
  });

  it('a cancel is not a provider failure', async () => {
    server.script.set('/v1/chat/completions', [{ delayMs: 1000, body: {} }]);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('task cancelled')), 100);
    await assert.rejects(
      ask({}, ac.signal),
      (e: unknown) => !isProviderError(e) && e instanceof Error && e.message === 'task cancelled',
    );
  });

  it('a provider host the guard does not allow is refused before any request, with what to do', async () => {
    const guarded = createGuardedClient(policy([]));
    try {
      const err = await providerError(ask({ request: guarded.request }));
      assert.equal(err.transient, false);
      assert.match(err.message, /MEDIAD_ALLOWED_URL_HOSTS/);
      assert.equal(server.requests.length, 0);
    } finally {
      await guarded.close();
    }
  });
});

describe('models and status', () => {
  it('lists models and reports a reachable provider', async () => {
    assert.deepEqual(await listModels(ep), ['whisper-1', 'vision-mini']);
    assert.deepEqual(await providerStatus(ep), { reachable: true, models: ['whisper-1', 'vision-mini'] });
    assert.equal(server.requests.at(-1)!.headers.authorization, `Bearer ${KEY}`);
  });

  it('tells an answering provider with a bad key from an unreachable one', async () => {
    server.script.set('/v1/models', [{ status: 401, body: { error: { message: 'bad key' } } }]);
    const unauthorised = await providerStatus(ep);
    assert.deepEqual([unauthorised.reachable, unauthorised.status], [true, 401]);
    const closed = await startOpenAiServer();
    await closed.close();
    const guarded = createGuardedClient(policy([closed.host]));
    try {
      const down = await providerStatus({ ...ep, baseUrl: closed.baseUrl, request: guarded.request });
      assert.equal(down.reachable, false);
      assert.match(down.message ?? '', /connection refused/);
    } finally {
      await guarded.close();
    }
  });
});
