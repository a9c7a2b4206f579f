import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

// The OpenID Connect variables: what start refuses (every problem listed together), and the defaults.

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig({ MEDIAD_DATA_DIR: '/tmp/mediad-config-test', ...env });
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
};

const OIDC = {
  MEDIAD_OIDC_ISSUER: 'https://accounts.example.com',
  MEDIAD_OIDC_CLIENT_ID: 'mediad',
  MEDIAD_OIDC_CLIENT_SECRET: 'secret',
};

describe('OpenID Connect configuration', () => {
  it('is off without an issuer, and then password sign-in must stay on', () => {
    const config = loadConfig({ MEDIAD_DATA_DIR: '/tmp/mediad-config-test' });
    assert.equal(config.oidc, null);
    assert.equal(config.accounts.passwordSignIn, true);
    assert.deepEqual(problemsOf({ MEDIAD_PASSWORD_SIGN_IN: 'false' }), [
      'MEDIAD_PASSWORD_SIGN_IN=false needs MEDIAD_OIDC_ISSUER: otherwise nobody can sign in',
    ]);
    assert.match(
      problemsOf({ MEDIAD_OIDC_CLIENT_ID: 'x' }).join(),
      /MEDIAD_OIDC_CLIENT_ID is set but MEDIAD_OIDC_ISSUER/,
    );
  });

  it('takes the issuer, client, name, auto-create and default membership', () => {
    const config = loadConfig({
      MEDIAD_DATA_DIR: '/tmp/mediad-config-test',
      ...OIDC,
      MEDIAD_OIDC_NAME: 'Acme SSO',
      MEDIAD_OIDC_AUTO_CREATE: 'true',
      MEDIAD_OIDC_DEFAULT_ORG: 'Acme',
      MEDIAD_OIDC_DEFAULT_ROLE: 'member',
      MEDIAD_PASSWORD_SIGN_IN: 'false',
    });
    assert.deepEqual(config.oidc, {
      issuer: 'https://accounts.example.com',
      clientId: 'mediad',
      clientSecret: 'secret',
      name: 'Acme SSO',
      autoCreate: true,
      defaultOrg: 'Acme',
      defaultRole: 'member',
    });
    assert.equal(config.accounts.passwordSignIn, false);
    const defaults = loadConfig({ MEDIAD_DATA_DIR: '/tmp/mediad-config-test', ...OIDC });
    assert.equal(defaults.oidc?.autoCreate, false);
    assert.equal(defaults.oidc?.defaultRole, 'viewer');
    assert.equal(defaults.oidc?.defaultOrg, null);
  });

  it('refuses plain HTTP except to a loopback issuer, a missing client, an owner role and a role without an org', () => {
    assert.deepEqual(problemsOf({ ...OIDC, MEDIAD_OIDC_ISSUER: 'http://127.0.0.1:9000' }), []);
    assert.deepEqual(problemsOf({ ...OIDC, MEDIAD_OIDC_ISSUER: 'http://localhost:9000/realms/x' }), []);
    assert.match(problemsOf({ ...OIDC, MEDIAD_OIDC_ISSUER: 'http://idp.example.com' }).join(), /must be an https/);
    assert.match(problemsOf({ ...OIDC, MEDIAD_OIDC_ISSUER: 'http://10.0.0.5' }).join(), /must be an https/);
    assert.match(problemsOf({ ...OIDC, MEDIAD_OIDC_ISSUER: 'not a url' }).join(), /issuer URL/);
    const missing = problemsOf({ MEDIAD_OIDC_ISSUER: OIDC.MEDIAD_OIDC_ISSUER, MEDIAD_OIDC_DEFAULT_ROLE: 'owner' });
    assert.equal(missing.length, 4, missing.join('\n'));
    assert.match(missing.join(), /MEDIAD_OIDC_CLIENT_ID too/);
    assert.match(missing.join(), /MEDIAD_OIDC_CLIENT_SECRET too/);
    assert.match(missing.join(), /MEDIAD_OIDC_DEFAULT_ROLE must be one of viewer, member, admin/);
    assert.match(missing.join(), /MEDIAD_OIDC_DEFAULT_ROLE needs MEDIAD_OIDC_DEFAULT_ORG/);
    assert.match(problemsOf({ ...OIDC, MEDIAD_OIDC_DEFAULT_ROLE: 'admin' }).join(), /needs MEDIAD_OIDC_DEFAULT_ORG/);
  });
});
