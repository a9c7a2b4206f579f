import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { lazySerializerCompiler } from '../../src/http/serializers.js';
import { validatorCompiler } from '../../src/http/validation.js';

// Validators and serialisers are built at a route's first use, not at start (bench/startup.ts):
// what they accept, coerce, report and let out must be what the eager ones did.

describe('schema compilers built at first use', () => {
  it('compiles a validator at its first call, not when Fastify asks for it', () => {
    // A schema Ajv refuses: eager compilation threw here, at start.
    const validate = validatorCompiler({
      schema: { type: 'no-such-type' },
      httpPart: 'body',
      method: 'POST',
      url: '/x',
    });
    assert.throws(() => validate({}), /no-such-type|schema is invalid/);
  });

  it('reports errors of the call that failed, and none after a call that passed', () => {
    const schema = Type.Object({ n: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });
    const validate = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/x' });
    assert.equal(validate({ n: 0 }), false);
    assert.equal(validate.errors?.[0]?.instancePath, '/n');
    assert.equal(validate({ n: '2' }), false, 'bodies are not coerced');
    assert.equal(validate({ n: 2 }), true);
  });

  it('coerces query strings and keeps decimal-only integers', () => {
    const schema = Type.Object({ limit: Type.Integer(), tag: Type.Optional(Type.String()) });
    const validate = validatorCompiler({ schema, httpPart: 'querystring', method: 'GET', url: '/x' });
    const query: Record<string, unknown> = { limit: '20' };
    assert.equal(validate(query), true);
    assert.equal(query.limit, 20);
    assert.equal(validate({ limit: '0x10' }), false);
    assert.match(validate.errors?.[0]?.message ?? '', /decimal digits/);
  });

  it('serialises with the schema as the allow-list, built at the first answer', async () => {
    const app = Fastify();
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(lazySerializerCompiler);
    const response = { 200: Type.Object({ id: Type.String() }) };
    app.get('/one', { schema: { response } }, async () => ({ id: 'a', secret: 'internal' }));
    // A schema fast-json-stringify cannot build: eager compilation failed app.ready().
    app.get('/broken', { schema: { response: { 200: { $ref: '#/definitions/missing' } } } }, async () => ({}));
    await app.ready();
    const one = await app.inject({ method: 'GET', url: '/one' });
    assert.equal(one.body, '{"id":"a"}');
    const broken = await app.inject({ method: 'GET', url: '/broken' });
    assert.equal(broken.statusCode, 500);
    await app.close();
  });
});
