// Every operation of the public API, as /openapi.json names and describes it: a closed catalogue,
// kept beside the routes (a test holds the two to each other: a route without an entry here, or
// an entry without a route, fails).

export interface Operation {
  /** Unique, stable: what generated clients name their methods after. */
  id: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** Answered without an API key. */
  public?: boolean;
  /** Acts on the signed-in person (the web application's session), not on a project. */
  session?: boolean;
}

export const TAGS = {
  Files: 'Files are stored bytes: fetched from a URL (`POST /files`), uploaded (`PUT /d/…`), or made by a task.',
  Media:
    'A media groups the files of one piece of content (an original and what was derived from it) with a title, alt text and metadata.',
  Tasks: 'A task derives a file from an input file or a URL (`kind` says how), or runs a workflow of steps.',
  Automations: 'An automation runs a workflow whenever an event of its trigger happens in the project.',
  Events: 'The project’s event log: every change, as webhooks deliver it.',
  Webhooks: 'Webhook endpoints receive the project’s events, signed per Standard Webhooks.',
  Project: 'The key’s project: its settings, and the secret that signs its task webhooks.',
  Signatures: 'Signed URLs read private files or let a browser upload straight to a path.',
  Delivery:
    'File bytes at their delivery address, with range requests; public unless the project requires signed URLs.',
  Keys: 'The project’s API keys: scopes, expiry, pause and resume, revocation. Managed with full access (an owner or admin, or a full-access key).',
  Accounts:
    'People: first-run setup, sign-in with a session cookie, one’s own account and sessions. The web application uses these; API clients use keys.',
  Organisations: 'The signed-in person’s organisations (a role in each) and their projects.',
  Service: 'What the service itself answers: its health and its metrics.',
} as const;
export type Tag = keyof typeof TAGS;

export const OPERATIONS: Record<string, Operation> = {
  'POST /files': {
    id: 'createFile',
    tag: 'Files',
    summary: 'Add a file from a URL',
    description:
      'Fetches the URL through the SSRF-guarded client, probes the bytes (kind, type, size, duration), stores them and answers the file. Without `media_id` a new media is created with this file as its `original`.',
  },
  'GET /files': { id: 'listFiles', tag: 'Files', summary: 'List files', description: 'Newest first.' },
  'GET /files/:id': { id: 'getFile', tag: 'Files', summary: 'Get a file' },
  'PATCH /files/:id': {
    id: 'updateFile',
    tag: 'Files',
    summary: 'Update a file',
    description: 'Only the properties sent change: folder, filename, ref, metadata.',
  },
  'DELETE /files/:id': {
    id: 'deleteFile',
    tag: 'Files',
    summary: 'Delete a file',
    description: 'The row first, then the bytes.',
  },
  'POST /media': {
    id: 'createMedia',
    tag: 'Media',
    summary: 'Create an empty media',
    description: 'Attach files to it with `POST /files {media_id}`.',
  },
  'GET /media': {
    id: 'listMedia',
    tag: 'Media',
    summary: 'List media',
    description:
      'Newest first, each with its files; filter by `kind`, `folder` (or below), `ref` (a file of that ref), `status` (`processing`: a task on it runs; `failed`: one failed; `ready`: neither), `created_after`, `created_before` and `q` (words of the title or a file name, or an id).',
  },
  'GET /media/:id': { id: 'getMedia', tag: 'Media', summary: 'Get a media' },
  'PATCH /media/:id': {
    id: 'updateMedia',
    tag: 'Media',
    summary: 'Update a media',
    description: 'Only the properties sent change: title, alt, metadata.',
  },
  'DELETE /media/:id': { id: 'deleteMedia', tag: 'Media', summary: 'Delete a media and its files' },
  'POST /tasks': {
    id: 'createTask',
    tag: 'Tasks',
    summary: 'Create a task',
    description:
      'Options are sent flat beside `kind` and echoed in `options`; what each kind takes is listed by `GET /tasks-config`. Answers the task `pending`; follow it with `GET /tasks/{id}` or a `webhook_url`.',
  },
  'GET /tasks': {
    id: 'listTasks',
    tag: 'Tasks',
    summary: 'List tasks',
    description:
      'Newest first; filter by `status`, `kind`, `media_id` (its input or output is a file of the media) and `automation_id`.',
  },
  'GET /tasks-config': {
    id: 'getTaskConfig',
    tag: 'Tasks',
    summary: 'What each task kind accepts',
    description:
      'Per kind: how it takes its input, its options as JSON Schema (exactly what `POST /tasks` checks), its formats and codecs, its retry policy.',
  },
  'GET /tasks/:id': {
    id: 'getTask',
    tag: 'Tasks',
    summary: 'Get a task',
    description: 'A workflow task lists its steps in `workflow`.',
  },
  'POST /tasks/:id/retry': {
    id: 'retryTask',
    tag: 'Tasks',
    summary: 'Retry a task',
    description:
      'A new task with the same kind, input and options, its `retry_of` naming this one; only a failed or cancelled task (a workflow step is retried with its workflow).',
  },
  'POST /tasks/retry': {
    id: 'retryTasks',
    tag: 'Tasks',
    summary: 'Retry every failed task of a filter',
    description:
      'Failed top-level tasks not retried before, oldest first, at most 1000; each is checked as a new task, and those that cannot run again are listed in `errors`.',
  },
  'POST /tasks/:id/cancel': {
    id: 'cancelTask',
    tag: 'Tasks',
    summary: 'Cancel a task',
    description: 'A pending, processing or waiting task (and its steps) becomes cancelled; a finished one answers 409.',
  },
  'GET /automations': { id: 'listAutomations', tag: 'Automations', summary: 'List automations' },
  'POST /automations': {
    id: 'createAutomation',
    tag: 'Automations',
    summary: 'Create an automation',
    description: 'The whole workflow is checked now; every problem is named by its path (`workflow[1].next[0].width`).',
  },
  'GET /automations/:id': { id: 'getAutomation', tag: 'Automations', summary: 'Get an automation' },
  'PATCH /automations/:id': {
    id: 'updateAutomation',
    tag: 'Automations',
    summary: 'Update an automation',
    description: 'Only the properties sent change.',
  },
  'PUT /automations/:id': {
    id: 'replaceAutomation',
    tag: 'Automations',
    summary: 'Replace an automation',
    description: 'Properties not sent are cleared.',
  },
  'DELETE /automations/:id': { id: 'deleteAutomation', tag: 'Automations', summary: 'Delete an automation' },
  'GET /events': {
    id: 'listEvents',
    tag: 'Events',
    summary: 'List events',
    description: 'Newest first; filter by `type`.',
  },
  'GET /events/:id': { id: 'getEvent', tag: 'Events', summary: 'Get an event' },
  'POST /webhooks': {
    id: 'createWebhook',
    tag: 'Webhooks',
    summary: 'Create a webhook endpoint',
    description: 'Its `whsec_…` secret is shown in this answer only.',
  },
  'GET /webhooks': { id: 'listWebhooks', tag: 'Webhooks', summary: 'List webhook endpoints' },
  'GET /webhooks/:id': { id: 'getWebhook', tag: 'Webhooks', summary: 'Get a webhook endpoint' },
  'PATCH /webhooks/:id': {
    id: 'updateWebhook',
    tag: 'Webhooks',
    summary: 'Update a webhook endpoint',
    description: 'Disabling fails its pending deliveries; enabling resets its failure count.',
  },
  'DELETE /webhooks/:id': { id: 'deleteWebhook', tag: 'Webhooks', summary: 'Delete a webhook endpoint' },
  'POST /webhooks/:id/rotate-secret': {
    id: 'rotateWebhookSecret',
    tag: 'Webhooks',
    summary: 'Rotate an endpoint’s secret',
    description: 'The old secret keeps signing beside the new one for 24 hours.',
  },
  'GET /webhooks/:id/deliveries': {
    id: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: 'List an endpoint’s deliveries',
    description: 'Newest first, each with every attempt.',
  },
  'GET /webhooks/:id/deliveries/:delivery_id': { id: 'getWebhookDelivery', tag: 'Webhooks', summary: 'Get a delivery' },
  'POST /webhooks/:id/deliveries/:delivery_id/retry': {
    id: 'retryWebhookDelivery',
    tag: 'Webhooks',
    summary: 'Send a delivery again now',
  },
  'GET /project': { id: 'getProject', tag: 'Project', summary: 'Get the project' },
  'PATCH /project': {
    id: 'updateProject',
    tag: 'Project',
    summary: 'Update the project',
    description: '`require_signed_delivery`, and `api_version`: the API version of requests that name none.',
  },
  'GET /project/stats': {
    id: 'getProjectStats',
    tag: 'Project',
    summary: 'The project’s figures',
    description:
      'Media, files, storage used, tasks created today (UTC), failures of the last 24 hours and the last ten of them.',
  },
  'GET /project/webhook-secret': {
    id: 'getProjectWebhookSecret',
    tag: 'Project',
    summary: 'Get the task webhook secret',
  },
  'POST /project/webhook-secret/rotate': {
    id: 'rotateProjectWebhookSecret',
    tag: 'Project',
    summary: 'Rotate the task webhook secret',
    description: 'The old secret keeps signing beside the new one for 24 hours.',
  },
  'POST /signatures': {
    id: 'createSignature',
    tag: 'Signatures',
    summary: 'Sign a URL',
    description:
      'A `get` signature reads a file of a project that requires signed delivery; a `put` signature lets a browser upload to the path.',
  },
  'GET /d/*': {
    id: 'getFileBytes',
    tag: 'Delivery',
    summary: 'Download a file',
    description:
      'The file’s bytes at its `url` (`/d/<project>/<folder>/<filename>`): `Range`, `If-None-Match`, and `?expiry&method=get&signature` when the project requires signed delivery.',
    public: true,
  },
  'HEAD /d/*': { id: 'headFileBytes', tag: 'Delivery', summary: 'A file’s headers', public: true },
  'PUT /d/*': {
    id: 'uploadFile',
    tag: 'Delivery',
    summary: 'Upload a file',
    description:
      'The raw bytes as the body, with a project key or a signed `put` URL. Answers the file, as `POST /files` does.',
    public: true,
  },
  'GET /keys': {
    id: 'listKeys',
    tag: 'Keys',
    summary: 'List API keys',
    description: 'Newest first, revoked ones too; never the keys themselves.',
  },
  'POST /keys': {
    id: 'createKey',
    tag: 'Keys',
    summary: 'Create an API key',
    description:
      '`scopes`: `full` (the default), or `<family>:read` / `<family>:write` for files, tasks, automations, events, webhooks, project; `expires` optional. The key itself is in this answer only.',
  },
  'PATCH /keys/:id': {
    id: 'updateKey',
    tag: 'Keys',
    summary: 'Rename, pause or resume an API key',
    description: 'A paused key answers 401 until resumed.',
  },
  'DELETE /keys/:id': { id: 'revokeKey', tag: 'Keys', summary: 'Revoke an API key', description: 'For good.' },
  'GET /auth/status': {
    id: 'getAuthStatus',
    tag: 'Accounts',
    summary: 'Whether mediad is set up',
    description: '`setup_required` until the first owner is made with the setup URL printed at start.',
    public: true,
  },
  'POST /auth/setup': {
    id: 'setUp',
    tag: 'Accounts',
    summary: 'First run: the first owner',
    description:
      'With the one-time token of the setup URL: the first owner, their organisation, project and API key (shown once), signed in. 409 once anyone is set up.',
    public: true,
  },
  'POST /auth/sign-in': {
    id: 'signIn',
    tag: 'Accounts',
    summary: 'Sign in',
    description:
      'Sets the session cookie and answers the CSRF token. The same 401 whether the email is known or not; attempts are limited per account and per address.',
    public: true,
  },
  'POST /auth/sign-out': {
    id: 'signOut',
    tag: 'Accounts',
    summary: 'Sign out',
    description: 'Ends this session and clears the cookie.',
    public: true,
  },
  'POST /auth/sign-out-everywhere': {
    id: 'signOutEverywhere',
    tag: 'Accounts',
    summary: 'Sign out everywhere',
    description: 'Ends every session of the signed-in user.',
    session: true,
  },
  'GET /auth/session': {
    id: 'getSession',
    tag: 'Accounts',
    summary: 'Who is signed in',
    description: 'The user, the CSRF token for unsafe requests, and their organisations with role and projects.',
    session: true,
  },
  'PATCH /account': { id: 'updateAccount', tag: 'Accounts', summary: 'Update one’s name or theme', session: true },
  'POST /account/password': {
    id: 'changePassword',
    tag: 'Accounts',
    summary: 'Change one’s password',
    description: 'After the current one; the user’s other sessions end.',
    session: true,
  },
  'GET /account/sessions': { id: 'listSessions', tag: 'Accounts', summary: 'List one’s sessions', session: true },
  'DELETE /account/sessions/:id': {
    id: 'revokeSession',
    tag: 'Accounts',
    summary: 'End one of one’s sessions',
    session: true,
  },
  'GET /orgs': { id: 'listOrgs', tag: 'Organisations', summary: 'List one’s organisations', session: true },
  'GET /orgs/:id/projects': {
    id: 'listOrgProjects',
    tag: 'Organisations',
    summary: 'List an organisation’s projects',
    session: true,
  },
  'POST /orgs/:id/projects': {
    id: 'createOrgProject',
    tag: 'Organisations',
    summary: 'Create a project',
    description: 'Owners and admins of the organisation.',
    session: true,
  },
  'GET /health': {
    id: 'getHealth',
    tag: 'Service',
    summary: 'Health',
    description: 'Answers 200 when the database answers and storage is writable.',
    public: true,
  },
  'GET /metrics': {
    id: 'getMetrics',
    tag: 'Service',
    summary: 'Prometheus metrics',
    description:
      'Needs `Authorization: Bearer $MEDIAD_METRICS_TOKEN` when that is set; otherwise loopback clients only.',
    public: true,
  },
};
