// What the sign-in page says for /app/sign-in?error=<code>, the codes the OpenID Connect callback
// redirects with. The same texts as OIDC_SIGN_IN_ERRORS in src/errors.ts (the app cannot import
// src/): test/unit/web-oidc-errors.test.ts fails when the two differ.

export const OIDC_SIGN_IN_MESSAGES = {
  oidc_not_configured: 'Sign-in with an OpenID Connect provider is not set up on this server.',
  oidc_provider_unreachable: 'The sign-in provider could not be reached; try again later.',
  oidc_state_missing: 'The sign-in took too long or was started in another browser; start again.',
  oidc_state_mismatch: 'The answer of the sign-in provider does not belong to this sign-in; start again.',
  oidc_denied: 'The sign-in provider did not sign you in.',
  oidc_invalid_response: 'The sign-in provider answered something that could not be verified.',
  oidc_email_missing: 'The sign-in provider did not share an email address.',
  oidc_email_unverified: 'The sign-in provider has not verified your email address.',
  oidc_unknown_user: 'No account has this email address; ask an administrator to add you.',
  oidc_account_disabled: 'This account is disabled.',
  oidc_failed: 'The sign-in failed; try again, and tell an administrator if it goes on.',
} as const satisfies Record<string, string>;

function isCode(code: string): code is keyof typeof OIDC_SIGN_IN_MESSAGES {
  return Object.hasOwn(OIDC_SIGN_IN_MESSAGES, code);
}

/** The readable message for an `?error=` code (an unknown code gets the generic failure). */
export function oidcErrorMessage(code: string | null): string | null {
  if (!code) return null;
  return isCode(code) ? OIDC_SIGN_IN_MESSAGES[code] : OIDC_SIGN_IN_MESSAGES.oidc_failed;
}
