import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as server from '../../src/api/docs/first-steps.js';
import * as web from '../../web/src/features/overview/overview-snippets.js';

// The web application's overview shows the guide's first-file snippets (it cannot import src/,
// so it keeps a copy): the two must write the same text for the same server, CA and project.

describe('the overview’s snippets', () => {
  it('are the guide’s, for every kind of server', () => {
    for (const ctx of [
      { base: 'https://localhost:8443', caFile: 'data/tls/ca.crt' },
      { base: 'https://media.example.com', caFile: null },
      { base: 'https://192.168.1.20:8443', caFile: '/var/lib/mediad/tls/ca.crt', project: 'prj_abc' },
    ]) {
      assert.equal(web.firstStepsShell(ctx), server.firstStepsShell(ctx));
      assert.equal(web.firstStepsNode(ctx), server.firstStepsNode(ctx));
    }
    assert.equal(web.MAKE_CLIP, server.MAKE_CLIP);
  });
});
