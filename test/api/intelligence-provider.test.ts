// The intelligence kinds with an OpenAI-compatible provider: a loopback server speaking the real
// wire protocol (multipart transcriptions, json_schema chat completions). What mediad sends is
// asserted (model names, the key in the header, images as data URLs, the schema), and so is what
// the provider's failures become: retries per the kind's policy, then provider_failed with the
// provider's status, never a 500 and never an output file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import webvtt from 'webvtt-parser';
import { ConfigError, loadConfig } from '../../src/config.js';
import { bringRetryForward, create, fetchJson, fetchText, run, upload, type Project } from '../helpers/ai-api.js';
import { sceneVideo, speechVideo, spokenParagraph } from '../helpers/ai-fixtures.js';
import { fixture } from '../helpers/fixtures.js';
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';
import { MEDIAD } from '../helpers/paths.js';
import { sqlitePassOnly } from '../helpers/passes.js';

const KEY = 'sk-provider-test-0123456789abcdef';
const WORDS = 'good morning everyone and welcome to the weekly meeting'.split(' ');

// The engines run the same on either database; the task pipeline they go through is tested on both.
const skip = sqlitePassOnly("the provider's protocol and the engines do not touch the database");

let ai: OpenAiServer;
let t: TestServer;
let p: Project;
const files: Record<string, any> = {};

/** A verbose_json answer: the known words spread over the uploaded audio. */
function transcript(audio: Buffer) {
  const seconds = (audio.length - 44) / 32000;
  const step = Math.min(0.5, seconds / (WORDS.length + 1));
  const words = WORDS.map((w, i) => ({ word: ` ${w}`, start: 0.2 + i * step, end: 0.2 + i * step + step * 0.8 }));
  return {
    task: 'transcribe',
    language: 'english',
    duration: seconds,
    text: WORDS.join(' '),
    words,
    segments: [
      { id: 0, start: words[0]!.start, end: words.at(-1)!.end, text: ` ${WORDS.join(' ')}`, avg_logprob: -0.1 },
    ],
  };
}

const imagesIn = (body: any): string[] =>
  body.messages.flatMap((m: any) =>
    Array.isArray(m.content)
      ? m.content.filter((c: any) => c.type === 'image_url').map((c: any) => c.image_url.url)
      : [],
  );
const textIn = (body: any): string =>
  body.messages
    .flatMap((m: any) =>
      Array.isArray(m.content) ? m.content.filter((c: any) => c.type === 'text').map((c: any) => c.text) : [m.content],
    )
    .join('\n');

/** The model's answers, by the schema asked for. */
function chat(body: any): string {
  const name = body.response_format?.json_schema?.name;
  if (name === 'description')
    return JSON.stringify({ title: 'Colour bars', description: 'A test pattern.', tags: ['Test', 'pattern', 'test'] });
  if (name === 'outline')
    return JSON.stringify({
      timeline: [
        { title: 'Opening', start: 0, end: 8 },
        { title: 'Rest', start: 8, end: 99 },
      ],
    });
  if (name === 'chapter_titles')
    return JSON.stringify({ titles: [0, 1, 2].map((index) => ({ index, title: `Model title ${index}` })) });
  if (name === 'nsfw_scores')
    return JSON.stringify({
      frames: imagesIn(body).map((_, index) => ({
        index,
        nudity: 0.01,
        sexual: 0.02,
        violence: index === 1 ? 0.9 : 0.1,
        gore: 0,
      })),
    });
  if (name === 'answer' && body.response_format.json_schema.schema.properties?.answer)
    return JSON.stringify({ answer: 'A test pattern.' });
  if (name === 'answer') return JSON.stringify({ bars: true, colours: 7 });
  return '{}';
}

before(async () => {
  if (skip) return;
  ai = await startOpenAiServer();
  t = await startTestServer({
    MEDIAD_AI_BASE_URL: ai.baseUrl,
    MEDIAD_AI_API_KEY: KEY,
    MEDIAD_AI_CHAT_MODEL: 'vision-mini',
    MEDIAD_AI_TRANSCRIBE_MODEL: 'whisper-1',
    MEDIAD_AI_TIMEOUT_SECONDS: '1',
    MEDIAD_ALLOWED_URL_HOSTS: ai.host,
    MEDIAD_WORKER_POLL_MS: '50',
  });
  const k = await t.key('ai', 'provider');
  p = { key: k.key, projectId: k.project_id };
  const wav = await spokenParagraph(['Good morning everyone and welcome to the weekly meeting.'], 1);
  files.wav = await upload(t, p, wav);
  files.talk = await upload(t, p, await speechVideo(wav, 'provider-talk'));
  files.scenes = await upload(
    t,
    p,
    (
      await sceneVideo([
        { title: 'Introduction', source: 'testsrc2' },
        { title: 'Second Topic', source: 'smptehdbars' },
        { title: 'Final Words', source: 'mandelbrot' },
      ])
    ).path,
  );
  files.png = await upload(t, p, await fixture('image-png'));
});
after(async () => {
  await t?.stop();
  await ai?.close();
});
beforeEach(() => {
  if (skip) return;
  ai.requests.length = 0;
  ai.script.clear();
  ai.transcribe = transcript;
  ai.chat = chat;
});

const chats = () => ai.requests.filter((r) => r.path === '/v1/chat/completions');
const uploads = () => ai.requests.filter((r) => r.path === '/v1/audio/transcriptions');

describe('with the provider', { skip }, () => {
  it('speech: multipart verbose_json to the transcription model, with the key; subtitles reuse it', async () => {
    const task = await run(t, p.key, { kind: 'speech', file_id: files.wav.id });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    const [q] = uploads();
    assert.equal(q!.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual([q!.fields?.model, q!.fields?.response_format], [['whisper-1'], ['verbose_json']]);
    assert.deepEqual(q!.fields?.['timestamp_granularities[]'], ['word', 'segment']);
    assert.equal(q!.files?.[0]?.type, 'audio/wav');
    const doc = await fetchJson(t, task.output.url);
    assert.deepEqual(
      [doc.engine, doc.engines[0].name, doc.engines[0].model],
      ['provider', 'openai-compatible', 'whisper-1'],
    );
    assert.deepEqual([doc.language, doc.text], ['en', [WORDS.join(' ')]]);
    assert.deepEqual(
      doc.timeline[0].words.map((w: any) => w.text),
      WORDS,
    );
    const subs = await run(t, p.key, { kind: 'subtitles', file_id: files.wav.id });
    assert.equal(subs.status, 'completed', JSON.stringify(subs.error));
    assert.equal(uploads().length, 1, 'not transcribed twice');
    const vtt = await fetchText(t, subs.output.url);
    assert.deepEqual(new webvtt.WebVTTParser().parse(vtt, 'subtitles').errors, []);
    assert.match(vtt, /good morning everyone/);
    assert.equal(subs.results.engine, 'provider');
  });

  it('description of a video: frames as data URLs and the transcript, json_schema, model and key', async () => {
    const task = await run(t, p.key, { kind: 'description', file_id: files.talk.id });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    const [q] = chats();
    assert.equal(q!.headers.authorization, `Bearer ${KEY}`);
    const body: any = q!.json;
    assert.equal(body.model, 'vision-mini');
    assert.equal(body.response_format.type, 'json_schema');
    assert.equal(body.response_format.json_schema.name, 'description');
    assert.deepEqual(body.response_format.json_schema.schema.required, ['title', 'description', 'tags']);
    const images = imagesIn(body);
    assert.ok(images.length >= 1);
    for (const url of images) assert.match(url, /^data:image\/jpeg;base64,\/9j\//);
    assert.match(textIn(body), /Transcript \(times are \[hh:mm:ss\]\):\n\[00:00:00\] good morning everyone/);
    const doc = await fetchJson(t, task.output.url);
    assert.deepEqual(
      [doc.title, doc.description, doc.tags, doc.engine],
      ['Colour bars', 'A test pattern.', ['test', 'pattern'], 'provider'],
    );
    assert.deepEqual(
      doc.engines.map((e: any) => [e.role, e.name, e.model]),
      [
        ['speech', 'openai-compatible', 'whisper-1'],
        ['description', 'openai-compatible', 'vision-mini'],
      ],
    );
  });

  it('nsfw with a vision model scores violence and gore too, per frame, into the metadata', async () => {
    const image = await run(t, p.key, { kind: 'nsfw', file_id: files.png.id });
    assert.equal(image.status, 'completed', JSON.stringify(image.error));
    assert.equal(imagesIn(chats()[0]!.json).length, 1);
    const doc = await fetchJson(t, image.output.url);
    assert.deepEqual(
      [doc.detected, doc.nudity, doc.sexual, doc.violence, doc.gore, doc.engine],
      [false, 0.01, 0.02, 0.1, 0, 'provider'],
    );
    const video = await run(t, p.key, { kind: 'nsfw', file_id: files.scenes.id, interval: 4 });
    const vdoc = await fetchJson(t, video.output.url);
    assert.equal(vdoc.detected, true);
    assert.equal(vdoc.frames.count, 6);
    assert.deepEqual(
      vdoc.timeline.map((s: any) => s.categories),
      [['violence']],
    );
    assert.deepEqual([vdoc.timeline[0].start, vdoc.timeline[0].end], [4, 8]);
    const m = (await t.call('GET', `/media/${files.scenes.media_id}`, { key: p.key })).json.data;
    assert.deepEqual(m.metadata.nsfw, {
      detected: true,
      nudity: 0.01,
      sexual: 0.02,
      violence: 0.9,
      gore: 0,
      confidence: 0.9,
      engine: 'provider',
    });
  });

  it('chapters titled by the chat model; outline from it, kept inside the media', async () => {
    const chapters = await run(t, p.key, { kind: 'chapters', file_id: files.scenes.id, format: 'json', min_length: 5 });
    assert.equal(chapters.status, 'completed', JSON.stringify(chapters.error));
    const asked: any = chats()[0]!.json;
    assert.equal(asked.response_format.json_schema.name, 'chapter_titles');
    assert.equal(imagesIn(asked).length, 3, 'a frame per chapter');
    const doc = await fetchJson(t, chapters.output.url);
    assert.deepEqual(
      doc.chapters.map((c: any) => c.title),
      ['Model title 0', 'Model title 1', 'Model title 2'],
    );
    assert.equal(doc.engines.at(-1).model, 'vision-mini');
    const outline = await run(t, p.key, { kind: 'outline', file_id: files.scenes.id });
    const odoc = await fetchJson(t, outline.output.url);
    assert.deepEqual(odoc.timeline, [
      { title: 'Opening', start: 0, end: 8 },
      { title: 'Rest', start: 8, end: 24 },
    ]);
  });

  it('prompt: a text answer, or one that follows the caller’s schema; a bad schema is a 400', async () => {
    const text = await run(t, p.key, { kind: 'prompt', file_id: files.png.id, prompt: 'What is shown?' });
    assert.equal(text.status, 'completed', JSON.stringify(text.error));
    assert.match(textIn(chats()[0]!.json), /Question: What is shown\?/);
    assert.deepEqual(await fetchJson(t, text.output.url).then((d) => [d.prompt, d.answer, d.engine]), [
      'What is shown?',
      'A test pattern.',
      'provider',
    ]);
    const schema = {
      type: 'object',
      properties: { bars: { type: 'boolean' }, colours: { type: 'integer' } },
      required: ['bars', 'colours'],
    };
    const typed = await run(t, p.key, { kind: 'prompt', file_id: files.png.id, prompt: 'Bars?', schema });
    assert.deepEqual((chats()[1]!.json as any).response_format.json_schema.schema, schema);
    assert.deepEqual((await fetchJson(t, typed.output.url)).answer, { bars: true, colours: 7 });
    const m = (await t.call('GET', `/media/${files.png.media_id}`, { key: p.key })).json.data;
    assert.deepEqual(m.metadata.prompt, { prompt: 'Bars?', answer: { bars: true, colours: 7 }, engine: 'provider' });
    const bad = await t.call('POST', '/tasks', {
      key: p.key,
      body: { kind: 'prompt', file_id: files.png.id, prompt: 'x', schema: { type: 'array' } },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.details[0].field, 'schema');
  });

  it('engine: local keeps a task on this machine even with a provider configured', async () => {
    const task = await run(t, p.key, { kind: 'description', file_id: files.png.id, engine: 'local' });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal((await fetchJson(t, task.output.url)).engine, 'local');
    assert.equal(ai.requests.length, 0);
  });

  it('GET /health does not call the provider', async () => {
    assert.equal((await t.call('GET', '/health')).status, 200);
    assert.equal(ai.requests.length, 0);
  });
});

describe('provider failures', { skip }, () => {
  const media = async (id: string) => (await t.call('GET', `/media/${id}`, { key: p.key })).json.data;

  /** Runs a description of the png whose every attempt the script answers; returns the failed task. */
  async function failsEveryTime(scripted: object, attempts = 4) {
    ai.requests.length = 0;
    ai.script.set(
      '/v1/chat/completions',
      Array.from({ length: attempts }, () => ({ ...scripted })),
    );
    const files0 = (await media(files.png.media_id)).files.length;
    const task = await create(t, p.key, { kind: 'description', file_id: files.png.id, ref: 'failing' });
    const retries = [];
    for (let n = 1; n < attempts; n++) retries.push(await bringRetryForward(t, task.id, n));
    const done = await waitForTask(t, p.key, task.id, undefined, 30_000);
    assert.deepEqual(
      [done.status, done.error_code, done.attempts, done.output],
      ['failed', 'provider_failed', attempts, null],
    );
    const after = await media(files.png.media_id);
    assert.equal(after.files.length, files0, 'no output file was stored');
    assert.equal(after.urls.failing, undefined);
    assert.equal(chats().length, attempts);
    return { done, retries };
  }

  it('a 500 is retried with the kind’s backoff, then fails with provider_failed naming the status', async () => {
    const { done, retries } = await failsEveryTime({ status: 500, body: { error: { message: 'model crashed' } } });
    assert.match(
      done.error,
      /the provider answered 500 Internal Server Error to POST 127\.0\.0\.1:\d+\/v1\/chat\/completions: model crashed/,
    );
    const waited = retries[0]!.dueAt - retries[0]!.failedAt;
    assert.ok(waited >= 8_000 && waited <= 12_500, `first retry after ${waited} ms (10 s ± 20%)`);
    assert.equal(retries[0]!.error.code, 'provider_failed');
  });

  it('a time-out, and JSON that does not match the schema, are retried and then fail', async () => {
    const slow = await failsEveryTime({ delayMs: 2_500, body: '{}' });
    assert.match(slow.done.error, /did not answer POST .*\/v1\/chat\/completions within 1 s/);
    const reply = (content: string) => ({
      body: {
        id: 'x',
        object: 'chat.completion',
        model: 'vision-mini',
        choices: [{ index: 0, message: { role: 'assistant', content } }],
      },
    });
    const garbled = await failsEveryTime(reply('{"title": "cut off'));
    assert.match(garbled.done.error, /answered 200 .* content that is not JSON/);
    const off = await failsEveryTime(reply('{"title": 5, "description": "x", "tags": []}'));
    assert.match(off.done.error, /answered 200 .* does not match the description schema: \/title must be string/);
  });

  it('a 429 waits as long as Retry-After says, then the task completes', async () => {
    ai.script.set('/v1/chat/completions', [
      { status: 429, headers: { 'retry-after': '30' }, body: { error: 'slow down' } },
    ]);
    const task = await create(t, p.key, { kind: 'description', file_id: files.png.id, ref: 'after_429' });
    const retry = await bringRetryForward(t, task.id, 1);
    assert.ok(retry.dueAt - retry.failedAt >= 29_000, `due after ${retry.dueAt - retry.failedAt} ms`);
    assert.match(retry.error.message, /429 Too Many Requests/);
    const done = await waitForTask(t, p.key, task.id, undefined, 30_000);
    assert.deepEqual([done.status, done.attempts], ['completed', 2]);
    assert.equal((await fetchJson(t, done.output.url)).title, 'Colour bars');
  });

  it('a 401 fails at once, says to check the key, and never shows it', async () => {
    ai.script.set('/v1/chat/completions', [{ status: 401, body: { error: { message: `invalid key ${KEY}` } } }]);
    const task = await run(t, p.key, { kind: 'description', file_id: files.png.id });
    assert.deepEqual([task.status, task.error_code, task.attempts], ['failed', 'provider_failed', 1]);
    assert.match(task.error, /401 Unauthorized .*invalid key \[redacted\] \(check the provider API key\)/);
    assert.doesNotMatch(JSON.stringify(task), new RegExp(KEY));
  });
});

describe('configuration and mediad doctor', { skip }, () => {
  it('lists provider problems together at start', () => {
    const base = { MEDIAD_DATA_DIR: '/tmp/mediad-config-test' };
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ ...base, ...env });
        return [];
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.problems;
      }
    };
    assert.deepEqual(problems({ MEDIAD_AI_CHAT_MODEL: 'x' }), [
      'MEDIAD_AI_CHAT_MODEL needs MEDIAD_AI_BASE_URL (the provider, e.g. http://127.0.0.1:8080/v1)',
    ]);
    assert.match(
      problems({ MEDIAD_AI_BASE_URL: 'http://127.0.0.1:11434/v1', MEDIAD_AI_CHAT_MODEL: 'llava' }).join(),
      /127\.0\.0\.1:11434 is a loopback address, which outbound calls refuse: add 127\.0\.0\.1:11434 to MEDIAD_ALLOWED_URL_HOSTS/,
    );
    assert.match(
      problems({ MEDIAD_AI_BASE_URL: 'https://user:pw@api.example.com/v1', MEDIAD_AI_CHAT_MODEL: 'm' }).join(),
      /put the key in MEDIAD_AI_API_KEY/,
    );
    const ok = loadConfig({
      ...base,
      MEDIAD_AI_BASE_URL: 'https://api.example.com/v1/',
      MEDIAD_AI_CHAT_MODEL: 'gpt-4o-mini',
      MEDIAD_AI_TRANSCRIBE_BASE_URL: 'http://[::1]:9000/v1',
      MEDIAD_AI_TRANSCRIBE_MODEL: 'large-v3',
      MEDIAD_ALLOWED_URL_HOSTS: '[::1]:9000',
    }).ai;
    assert.deepEqual(ok.chat, { baseUrl: 'https://api.example.com/v1', model: 'gpt-4o-mini' });
    assert.deepEqual(ok.transcribe, { baseUrl: 'http://[::1]:9000/v1', model: 'large-v3' });
  });

  /** `mediad doctor --json` as a process of its own. */
  function doctor(env: Record<string, string>): Promise<{ code: number | null; report: any }> {
    const child = spawn(process.execPath, [...MEDIAD, 'doctor', '--json'], {
      env: { ...process.env, MEDIAD_DATA_DIR: t.dataDir, MEDIAD_ALLOWED_URL_HOSTS: ai.host, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, report: JSON.parse(out) })));
  }

  it('mediad doctor reports engines, the provider and its models, and exits 1 when something is broken', async () => {
    const env = { MEDIAD_AI_BASE_URL: ai.baseUrl, MEDIAD_AI_API_KEY: KEY, MEDIAD_AI_CHAT_MODEL: 'vision-mini' };
    const good = await doctor(env);
    assert.equal(good.code, 0, JSON.stringify(good.report.problems));
    assert.deepEqual(
      good.report.local.map((e: any) => [e.engine, e.found]),
      [
        ['pocketsphinx', true],
        ['tesseract', true],
        ['ffmpeg-scdet', true],
        ['nsfwjs', true],
      ],
    );
    assert.match(good.report.local[3].message, /loaded in \d+ ms/);
    assert.deepEqual(
      good.report.provider.map((q: any) => [q.role, q.reachable, q.model_listed, q.models]),
      [['chat', true, true, ['whisper-1', 'vision-mini']]],
    );
    assert.deepEqual([good.report.kinds.prompt, good.report.kinds.speech], ['provider', 'local']);
    const models = ai.requests.filter((r) => r.path === '/v1/models');
    assert.equal(models[0]!.headers.authorization, `Bearer ${KEY}`);
    const wrong = await doctor({ ...env, MEDIAD_AI_CHAT_MODEL: 'no-such-model' });
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.report.problems.join(),
      /does not list the model "no-such-model" \(it lists: whisper-1, vision-mini\)/,
    );
    ai.script.set('/v1/models', [{ status: 503, body: { error: 'loading' } }]);
    const down = await doctor(env);
    assert.equal(down.code, 1);
    assert.match(down.report.problems.join(), /answered 503/);
  });
});

describe('with the default time limit (MEDIAD_AI_TIMEOUT_SECONDS unset)', { skip }, () => {
  it('transcribes audio of any length: the limit grown from the audio is a whole number of ms', async () => {
    const d = await startTestServer({
      MEDIAD_AI_BASE_URL: ai.baseUrl,
      MEDIAD_AI_TRANSCRIBE_MODEL: 'whisper-1',
      MEDIAD_ALLOWED_URL_HOSTS: ai.host,
    });
    try {
      const k = await d.key('ai', 'default-limit');
      // 2.3457 s: 120 s plus the audio's length is 122345.7 ms, which AbortSignal.timeout refuses.
      const wav = path.join(d.dataDir, 'odd-length.wav');
      await new Promise<void>((resolve, reject) =>
        spawn('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=440:d=2.3457', '-ar', '16000', wav], {
          stdio: 'inherit',
        }).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}`)))),
      );
      const file = await upload(d, { key: k.key, projectId: k.project_id }, wav);
      const task = await run(d, k.key, { kind: 'speech', file_id: file.id });
      assert.equal(task.status, 'completed', `${task.error_code}: ${task.error}`);
      assert.equal(task.attempts, 1);
      assert.ok(uploads().length >= 1);
    } finally {
      await d.stop();
    }
  });
});
