// A loopback server that speaks the OpenAI wire protocol for the provider tests: JSON chat
// completions, multipart audio transcriptions (parsed with the platform's own multipart parser),
// GET /v1/models. Every request is recorded; failures are scripted per path.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  json?: unknown;
  fields?: Record<string, string[]>;
  files?: { field: string; filename: string; type: string; bytes: Buffer }[];
}

export interface Scripted {
  status?: number;
  headers?: Record<string, string>;
  /** Raw body; an object is sent as JSON. */
  body?: string | object;
  delayMs?: number;
}

export interface OpenAiServer {
  baseUrl: string;
  host: string;
  requests: RecordedRequest[];
  /** The JSON text the next chat completions answer carries as message content (default `{}`). */
  chatContent: string;
  /** When set, the message content of each chat answer, from the request body (overrides chatContent). */
  chat?: (body: any) => string;
  /** Scripted answers, used first-in first-out before the default behaviour. */
  script: Map<string, Scripted[]>;
  /** Builds the verbose_json answer of a transcription from the uploaded audio. */
  transcribe: (audio: Buffer, index: number) => object;
  close(): Promise<void>;
}

async function readAll(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks);
}

export async function startOpenAiServer(): Promise<OpenAiServer> {
  let transcriptions = 0;
  const state: Omit<OpenAiServer, 'baseUrl' | 'host' | 'close'> = {
    requests: [],
    chatContent: '{}',
    script: new Map(),
    transcribe: (_audio, i) => ({ language: 'english', duration: 1, text: `w${i}`, words: [], segments: [] }),
  };
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const raw = await readAll(req);
    const rec: RecordedRequest = { method: req.method ?? '', path, headers: req.headers };
    const type = req.headers['content-type'] ?? '';
    if (type.startsWith('application/json')) rec.json = JSON.parse(raw.toString('utf8'));
    if (type.startsWith('multipart/form-data')) {
      const form = await new Request('http://x/', {
        method: 'POST',
        headers: { 'content-type': type },
        body: raw,
      }).formData();
      rec.fields = {};
      rec.files = [];
      for (const [field, value] of form.entries()) {
        if (typeof value === 'string') (rec.fields[field] ??= []).push(value);
        else
          rec.files.push({
            field,
            filename: value.name,
            type: value.type,
            bytes: Buffer.from(await value.arrayBuffer()),
          });
      }
    }
    state.requests.push(rec);
    const send = (status: number, body: string | object, headers: Record<string, string> = {}) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
    };
    const scripted = state.script.get(path)?.shift();
    if (scripted) {
      if (scripted.delayMs) await new Promise((r) => setTimeout(r, scripted.delayMs));
      if (!res.destroyed) send(scripted.status ?? 200, scripted.body ?? '', scripted.headers);
      return;
    }
    if (path === '/v1/models' && req.method === 'GET') {
      send(200, {
        object: 'list',
        data: [
          { id: 'whisper-1', object: 'model' },
          { id: 'vision-mini', object: 'model' },
        ],
      });
    } else if (path === '/v1/chat/completions' && req.method === 'POST') {
      const json = rec.json;
      const model =
        typeof json === 'object' && json !== null && 'model' in json && typeof json.model === 'string'
          ? json.model
          : 'unknown';
      send(200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [
          {
            index: 0,
            finish_reason: 'stop',
            message: { role: 'assistant', content: state.chat ? state.chat(json) : state.chatContent, refusal: null },
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    } else if (path === '/v1/audio/transcriptions' && req.method === 'POST') {
      const file = rec.files?.find((f) => f.field === 'file');
      send(200, state.transcribe(file?.bytes ?? Buffer.alloc(0), transcriptions++));
    } else {
      send(404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const result: OpenAiServer = Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    host: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return result;
}
