import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';

// Without a built web application, /app/ says how to build it instead of failing obscurely.

describe('/app/ without dist/web', () => {
  it('answers 503 service_unavailable naming npm run build', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-webapp-'));
    const runtime = await createRuntime(loadConfig({ MEDIAD_DATA_DIR: dataDir, MEDIAD_LOG_LEVEL: 'silent' }));
    try {
      const app = await buildApp(runtime.deps, { webRoot: path.join(dataDir, 'no-web') });
      for (const url of ['/app/', '/app/sign-in', '/app/assets/index-abc.js']) {
        const res = await app.inject({ method: 'GET', url, headers: { host: 'localhost' } });
        assert.equal(res.statusCode, 503, url);
        const body = res.json();
        assert.equal(body.error.code, 'service_unavailable');
        assert.match(body.error.message, /npm run build/);
      }
      await app.close();
    } finally {
      await runtime.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
