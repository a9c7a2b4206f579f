import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { pino } from 'pino';
import { lazyChildLogger } from '../../src/http/lazy-logger.js';

// A request's logger is made when the request first logs; until then no pino child exists. What it
// writes must be what Fastify's own child wrote: the request id bound to every line.

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, log: pino({ level: 'warn' }, stream) };
}

describe('the lazy request logger', () => {
  it('makes the child only when a line is written, with the bindings and level of the child', () => {
    const { lines, log } = capture();
    let children = 0;
    const parent = Object.assign(Object.create(log) as typeof log, {
      child: (...args: Parameters<typeof log.child>) => {
        children++;
        return log.child(...args);
      },
    });
    const lazy = lazyChildLogger(parent, { request_id: 'req_1' }, {});
    assert.equal(lazy.level, 'warn', 'the level is read without making the child');
    assert.equal(children, 0, 'no child until a line is written');
    lazy.info('below the level');
    assert.equal(children, 1, 'a call makes the child');
    assert.equal(lines.length, 0, 'and the level still applies');
    lazy.warn({ code: 'x' }, 'slow %s', 'disk');
    lazy.error(new Error('boom'));
    assert.equal(children, 1, 'made once');
    assert.equal(lines.length, 2);
    assert.equal(lines[0]!.request_id, 'req_1');
    assert.equal(lines[0]!.msg, 'slow disk');
    assert.equal(lines[0]!.code, 'x');
    assert.equal((lines[1]!.err as { message: string }).message, 'boom');

    const quiet = lazyChildLogger(log, { request_id: 'req_2' }, { level: 'error' });
    assert.equal(quiet.level, 'error', "a route's own level");
    quiet.warn('dropped');
    quiet.child({ step: 'inner' }).error('kept');
    assert.equal(lines.length, 3);
    assert.equal(lines[2]!.request_id, 'req_2');
    assert.equal(lines[2]!.step, 'inner');
  });

  it('is the logger Fastify gives a request, and its lines carry the request id', async () => {
    const { lines, log } = capture();
    const app = Fastify({
      loggerInstance: log,
      genReqId: () => 'req_fastify',
      childLoggerFactory: lazyChildLogger,
      disableRequestLogging: true,
    });
    app.get('/quiet', async () => 'ok');
    app.get('/logs', async (req) => {
      req.log.warn({ code: 'slow' }, 'the disk is slow');
      return 'ok';
    });
    assert.equal((await app.inject('/quiet')).statusCode, 200);
    assert.equal(lines.length, 0);
    assert.equal((await app.inject('/logs')).statusCode, 200);
    await app.close();
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.reqId, 'req_fastify');
    assert.equal(lines[0]!.msg, 'the disk is slow');
  });
});
