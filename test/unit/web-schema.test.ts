import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { generateWebSchema, SCHEMA_FILE } from '../../scripts/web-schema.js';

// The web app's API types flow from the API: web/src/lib/api/schema.d.ts must be exactly what
// openapi-typescript makes of the /openapi.json the current routes build.

describe('web/src/lib/api/schema.d.ts', () => {
  it('is what the current API generates (run npm run web:schema when this fails)', async () => {
    const expected = await generateWebSchema();
    const committed = fs.readFileSync(SCHEMA_FILE, 'utf8');
    assert.ok(committed === expected, 'web/src/lib/api/schema.d.ts is stale: run `npm run web:schema` and commit it');
  });
});
