import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OIDC_SIGN_IN_ERRORS } from '../../src/errors.js';
import { OIDC_SIGN_IN_MESSAGES, oidcErrorMessage } from '../../web/src/features/auth/oidc-errors.js';

// The sign-in page's texts for /app/sign-in?error=<code> are a copy (the app cannot import src/):
// they must be exactly the server's catalogue.

describe('web/src/features/auth/oidc-errors.ts', () => {
  it('has every OpenID Connect sign-in error code of src/errors.ts with the same text, and no other', () => {
    assert.deepEqual({ ...OIDC_SIGN_IN_MESSAGES }, { ...OIDC_SIGN_IN_ERRORS });
  });
  it('gives the generic failure for an unknown code and nothing without one', () => {
    assert.equal(oidcErrorMessage('oidc_unknown_user'), OIDC_SIGN_IN_ERRORS.oidc_unknown_user);
    assert.equal(oidcErrorMessage('nonsense'), OIDC_SIGN_IN_ERRORS.oidc_failed);
    assert.equal(oidcErrorMessage('toString'), OIDC_SIGN_IN_ERRORS.oidc_failed);
    assert.equal(oidcErrorMessage(null), null);
  });
});
