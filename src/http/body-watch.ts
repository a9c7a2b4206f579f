import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { AppError } from '../errors.js';
import { answerOnSocket } from './client-error.js';

// A request body that trickles in (a byte every few seconds) would hold its connection until
// Node's request timeout (300 s, checked every 30 s). Bodies are watched instead: each window of
// `windowMs` must bring MIN_BYTES or the rest of the body, else the request gets 408 and its
// connection closes. One timer checks every body in flight; a request without a body is not watched.

const MIN_BYTES = 1024;
const CHECK_MS = 1000;

interface Watched {
  raw: IncomingMessage;
  socket: Socket;
  selfUrl: string;
  windowStart: number;
  bytesAtStart: number;
}

export class BodyWatch {
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly windowMs: number,
    /** The server's public URL, for the answer's links. */
    private readonly publicUrl: string,
  ) {}

  /** Watches the body of `raw` until it ends or its connection closes (nothing to do without a body). */
  watch(raw: IncomingMessage): void {
    const length = raw.headers['content-length'];
    const hasBody = raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
    if (!hasBody || raw.complete) return;
    const socket = raw.socket;
    const selfUrl = `${this.publicUrl}${raw.url ?? '/'}`;
    const w: Watched = { raw, socket, selfUrl, windowStart: Date.now(), bytesAtStart: socket.bytesRead };
    this.watched.add(w);
    const forget = () => this.watched.delete(w);
    raw.once('end', forget);
    raw.once('close', forget);
    this.timer ??= setInterval(() => this.check(), CHECK_MS).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watched.clear();
  }

  private check(): void {
    const now = Date.now();
    for (const w of this.watched) {
      if (w.raw.complete || w.socket.destroyed) {
        this.watched.delete(w);
        continue;
      }
      if (now - w.windowStart < this.windowMs) continue;
      const read = w.socket.bytesRead;
      if (read - w.bytesAtStart >= MIN_BYTES) {
        w.windowStart = now;
        w.bytesAtStart = read;
        continue;
      }
      this.watched.delete(w);
      const seconds = Math.round(this.windowMs / 1000);
      answerOnSocket(
        w.socket,
        w.selfUrl,
        new AppError(
          'request_timeout',
          `the request body arrived too slowly (less than ${MIN_BYTES} bytes in ${seconds} s); send it at a steady pace`,
        ),
        w.raw.headers,
      );
    }
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
