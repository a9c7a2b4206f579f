import { Writable } from 'node:stream';

// Logs as people read them on a terminal: pino writes its JSON lines into this stream, which
// prints `12:04:05 WARN  message  key=value …` instead, and a first-run message (one with
// `banner` steps: the setup link, how to trust the local CA) as a plain block of lines. Files and
// pipes keep the JSON lines (runtime.ts chooses; MEDIAD_LOG_FORMAT overrides).

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, or that the text already says. */
const QUIET = new Set(['level', 'time', 'pid', 'hostname', 'service', 'msg', 'banner', 'steps']);

function value(v: unknown): string {
  if (typeof v === 'string') return /\s/.test(v) || v === '' ? JSON.stringify(v) : v;
  if (v && typeof v === 'object' && 'message' in v && typeof v.message === 'string') return JSON.stringify(v.message);
  return JSON.stringify(v);
}

/** One log record as text: a line, or a block for a first-run message. */
export function formatRecord(record: Record<string, unknown>): string {
  const level = LEVELS[record.level as number] ?? String(record.level);
  const time = typeof record.time === 'string' ? record.time.slice(11, 19) : '';
  const msg = String(record.msg ?? '');
  const steps = Array.isArray(record.steps) ? (record.steps as unknown[]).map(String) : [];
  if (record.banner) {
    const rule = '─'.repeat(72);
    return `\n${rule}\n${msg}\n${steps.length ? `\n${steps.join('\n')}\n` : ''}${rule}\n\n`;
  }
  const fields = Object.entries(record)
    .filter(([k, v]) => !QUIET.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`);
  return `${time} ${level.padEnd(5)} ${msg}${fields.length ? `  ${fields.join(' ')}` : ''}${
    steps.length ? `\n${steps.map((s) => `    ${s}`).join('\n')}` : ''
  }\n`;
}

/** A stream for pino that writes readable text to `out` (a terminal). */
export function prettyStream(out: NodeJS.WritableStream): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          out.write(formatRecord(JSON.parse(line) as Record<string, unknown>));
        } catch {
          out.write(`${line}\n`);
        }
      }
      done();
    },
  });
}
