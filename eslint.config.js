// Lint: typescript-eslint's recommended rules, and docs/DESIGN.md's boundaries as rules rather than
// memory. Floors, top to bottom: cli/commands/server/app/runtime > api > http > workers > services >
// kinds > workflows > queue > webhooks > events > db > shapes; beside them at the bottom
// media, storage, net, ai, secrets. A floor imports only floors below it; inside services, the
// wings operations > people | media > the shared base. Import cycles are found by
// `madge --circular` (npm run lint). A new folder gets its rule here in the same commit.
import fs from 'node:fs';
import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/** Imports of mediad's own folders (`../<folder>/…`) that a floor may not make. */
const folders = (names) =>
  names.map((n) => ({
    group: [`../${n}/*`, `../../${n}/*`],
    message: `this floor may not import from src/${n}/ (see docs/DESIGN.md)`,
  }));
/** Imports of the services wings (`services/<wing>/`) that a wing or the shared base may not make. */
const wings = (prefix, names, who) => ({
  group: names.map((n) => `${prefix}${n}/*`),
  message: `${who} may not import services/${names.join('/, services/')}/ (see docs/DESIGN.md)`,
});
/** The modules only one folder may use. */
const owned = [
  {
    group: ['sharp', 'child_process', 'node:child_process'],
    message: 'sharp and child processes live in src/media/ only',
  },
  { group: ['@aws-sdk/*'], message: 'the S3 SDK lives in src/storage/ only' },
  { group: ['undici'], message: 'outbound HTTP goes through the guarded client of src/net/' },
];
const ownedExcept = (keep) => owned.filter((o) => !o.group.some((g) => keep.includes(g)));

const SERVER_SIDE = [
  'api',
  'http',
  'workers',
  'services',
  'kinds',
  'workflows',
  'queue',
  'webhooks',
  'events',
  'db',
  'shapes',
  'metrics',
  'ratelimit',
  'tls',
];

/** One rule per folder (a later rule for the same files would replace it, not add to it). */
const restrict = (files, banned, { typesFrom = [], ownedPatterns = owned, extra = [] } = {}) => ({
  files,
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: [
          ...ownedPatterns,
          ...folders(banned),
          ...folders(typesFrom).map((p) => ({ ...p, allowTypeImports: true })),
          ...extra,
        ],
      },
    ],
  },
});

/** The web app's feature folders (web/src/features/<name>/), read from the tree: a new one is bound at once. */
const WEB_FEATURES = fs
  .readdirSync(new URL('./web/src/features/', import.meta.url), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);
const WEB_NOT_SERVER = {
  group: ['**/src/*', '!./*', '!../*'],
  message: 'the web app uses the public API, not src/',
};
const webBan = (group, message) => ({ group, message });
/** One rule per web/src folder, keeping the ban on src/ (a later rule for the same files replaces it). */
const webRestrict = (folder, patterns) => ({
  files: [`web/src/${folder}/**/*.{ts,tsx}`],
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [WEB_NOT_SERVER, ...patterns] }] },
});

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', '.test-cache/**', 'data/**', 'web/dist/**', 'web/src/lib/api/schema.d.ts'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Unused names that start with _ are deliberate (a destructured field left out).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // The environment is read in one place: src/config.ts.
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read configuration in src/config.ts only' },
      ],
    },
  },
  restrict(['src/*.ts'], []),
  // The command's subcommands (mediad upload, tls trust): the top floor, beside cli.ts.
  restrict(['src/commands/**'], []),
  // The local CA and how clients come to trust it: runs tools only through src/media/.
  restrict(
    ['src/tls/**'],
    SERVER_SIDE.filter((f) => f !== 'tls'),
  ),
  restrict(['src/api/**'], ['workers']),
  restrict(['src/http/**'], ['api', 'workers']),
  restrict(['src/workers/**'], ['api', 'http']),
  // Services in three wings over a shared base (services/*.ts: access, audit, idempotency).
  // operations (the running service: request log, usage, queue, purge) may read both other wings;
  // people (accounts, orgs, keys) and media (files, tasks, automations) never import each other.
  restrict(['src/services/*.ts'], ['api', 'http', 'workers'], {
    extra: [wings('./', ['people', 'media', 'operations'], 'the shared services')],
  }),
  restrict(['src/services/people/**'], ['api', 'http', 'workers'], {
    extra: [wings('../', ['media', 'operations'], 'services/people/')],
  }),
  restrict(['src/services/media/**'], ['api', 'http', 'workers'], {
    extra: [wings('../', ['people', 'operations'], 'services/media/')],
  }),
  restrict(['src/services/operations/**'], ['api', 'http', 'workers']),
  restrict(['src/kinds/**'], ['api', 'http', 'workers', 'services', 'webhooks', 'events', 'metrics', 'ratelimit'], {
    typesFrom: ['db'],
  }),
  restrict(['src/workflows/**'], ['api', 'http', 'workers', 'services', 'kinds', 'webhooks', 'events', 'metrics']),
  restrict(['src/queue/**'], ['api', 'http', 'workers', 'services', 'kinds', 'workflows', 'metrics']),
  restrict(['src/webhooks/**'], ['api', 'http', 'workers', 'services', 'kinds', 'workflows', 'queue']),
  restrict(['src/events/**'], ['api', 'http', 'workers', 'services', 'kinds', 'workflows', 'queue', 'webhooks']),
  restrict(
    ['src/db/**'],
    ['api', 'http', 'workers', 'services', 'kinds', 'workflows', 'queue', 'webhooks', 'events', 'metrics'],
  ),
  // Shapes are pure functions over rows: types may come from below, nothing runs from elsewhere.
  restrict(['src/shapes/**'], [], { typesFrom: SERVER_SIDE.filter((f) => f !== 'shapes') }),
  // The bottom: media, storage, net and ai import nothing from the server side.
  restrict(['src/media/**'], SERVER_SIDE, { ownedPatterns: ownedExcept(['sharp']) }),
  restrict(['src/storage/**'], SERVER_SIDE, { ownedPatterns: ownedExcept(['@aws-sdk/*']) }),
  restrict(['src/net/**'], SERVER_SIDE, { ownedPatterns: ownedExcept(['undici']) }),
  restrict(['src/ai/**'], SERVER_SIDE),
  restrict(['src/secrets/**'], SERVER_SIDE),
  {
    // Migrations are written against the schema of their day, not today's Database type (Kysely's advice).
    files: ['src/db/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The web application (web/): browser code, React's hook rules. It reaches the server only
    // through the public API (web/src/lib/api/client.ts), never by importing src/.
    files: ['web/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat['recommended-latest'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      ...reactHooks.configs.flat['recommended-latest'].rules,
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [WEB_NOT_SERVER] }],
    },
  },
  // web/src's boundaries (docs/web-app.md, "web/src layout"): a feature imports no other feature and
  // not the app shell; lib/ and components/ import no feature and not the shell; lib/ imports no
  // component. What two features share moves down to lib/ or components/.
  ...WEB_FEATURES.map((f) =>
    webRestrict(`features/${f}`, [
      webBan(
        WEB_FEATURES.filter((g) => g !== f).flatMap((g) => [`../${g}/*`, `../../${g}/*`, `**/features/${g}/*`]),
        `the ${f} feature may not import another feature: move what they share to web/src/lib/ or web/src/components/`,
      ),
      webBan(['**/app/*'], 'a feature may not import the app shell (web/src/app/)'),
    ]),
  ),
  webRestrict('components', [
    webBan(['**/features/*', '**/app/*'], 'web/src/components/ may not import a feature or the app shell'),
  ]),
  webRestrict('lib', [
    webBan(
      ['**/features/*', '**/app/*', '**/components/*'],
      'web/src/lib/ may not import a feature, a component or the app shell',
    ),
  ]),
  // Resumable uploads (issue 25): the tus server library is mounted by src/api/ (uploads-tus.ts and
  // tus-server.ts) only, its stores live in src/storage/, and only the lock (src/db/advisory-locker.ts)
  // and those two floors use its types. The core rule, so the floors' own import rules above stay whole.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/api/tus-server.ts', 'src/api/uploads-tus.ts', 'src/storage/**', 'src/db/advisory-locker.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@tus/*'],
              message: 'the tus library lives in src/api/tus-server.ts, src/storage/ and src/db/advisory-locker.ts',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['web/public/**/*.js'],
    languageOptions: { globals: { ...globals.browser }, sourceType: 'script' },
  },
  {
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
