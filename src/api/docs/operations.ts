// Every operation of the public API, as /openapi.json names and describes it: a closed catalogue,
// kept beside the routes (a test holds the two to each other: a route without an entry here, or
// an entry without a route, fails).

import { OIDC_SIGN_IN_ERRORS } from '../../errors.js';

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
  Usage:
    'The project’s request log (what its keys and people asked, and the answers’ status and time; never bodies or secrets) and its usage figures.',
  Accounts:
    'People: first-run setup, sign-in with a session cookie, one’s own account and sessions. The web application uses these; API clients use keys.',
  Organisations: 'The signed-in person’s organisations (a role in each) and their projects.',
  Administration:
    'Organisations, projects, members and roles, invitations and the audit log: owners and admins of an organisation, and instance administrators.',
  Service: 'What the service itself answers: its health and its metrics.',
  'Image URLs':
    'On-the-fly images: `/img/…` URLs signed with the project’s image-URL key name a file and options (size, fit, format, dpr, time for a video’s poster frame); each result is made once and cached. See docs/image-urls.md.',
  Operations:
    'Running mediad: the organisation’s queue per task kind (pause and resume a kind) and the workers alive (owners and admins, or full-access keys), and the system’s status (any authenticated caller).',
  // Resumable uploads (issue 25).
  Uploads:
    'Resumable uploads with the tus 1.0 protocol (any tus client: tus-js-client, Uppy, TUSKit…): create, send chunks, resume after a break; the last byte makes the file. `POST /uploads` gives a browser a short-lived upload token.',
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
  'GET /files/:id': {
    id: 'getFile',
    tag: 'Files',
    summary: 'Get a file',
    description:
      'One file of this project by its id (`file_…`): its kind, type, size, dimensions, duration, `url` and metadata. Another project’s id is a 404.',
  },
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
  'GET /media/:id': {
    id: 'getMedia',
    tag: 'Media',
    summary: 'Get a media',
    description:
      'One media with its files (`files[]`, each with its `status`) and `urls`: the original and every output, by `ref`.',
  },
  'PATCH /media/:id': {
    id: 'updateMedia',
    tag: 'Media',
    summary: 'Update a media',
    description: 'Only the properties sent change: title, alt, metadata.',
  },
  'DELETE /media/:id': {
    id: 'deleteMedia',
    tag: 'Media',
    summary: 'Delete a media and its files',
    description:
      'Deletes the media and every file in it (rows first, then the bytes); `media.deleted` and `file.deleted` are recorded.',
  },
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
      'Failed top-level tasks not retried before, oldest first, at most 500 a call (`more: true` when others are left: call again); each is checked as a new task, and those that cannot run again are listed in `errors`. A `media_id` or `automation_id` that is not this project’s is a 404.',
  },
  'POST /tasks/:id/cancel': {
    id: 'cancelTask',
    tag: 'Tasks',
    summary: 'Cancel a task',
    description: 'A pending, processing or waiting task (and its steps) becomes cancelled; a finished one answers 409.',
  },
  'GET /automations': {
    id: 'listAutomations',
    tag: 'Automations',
    summary: 'List automations',
    description:
      'Newest first (10 a page by default), each with its trigger, workflow and status (`active` or `paused`).',
  },
  'POST /automations': {
    id: 'createAutomation',
    tag: 'Automations',
    summary: 'Create an automation',
    description: 'The whole workflow is checked now; every problem is named by its path (`workflow[1].next[0].width`).',
  },
  'GET /automations/:id': {
    id: 'getAutomation',
    tag: 'Automations',
    summary: 'Get an automation',
    description: 'One automation: its trigger, its whole workflow and whether it is active.',
  },
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
  'DELETE /automations/:id': {
    id: 'deleteAutomation',
    tag: 'Automations',
    summary: 'Delete an automation',
    description:
      'It no longer fires (`automation.deleted` is recorded); the tasks it started and their outputs are kept.',
  },
  'POST /automations/:id/dry-run': {
    id: 'dryRunAutomation',
    tag: 'Automations',
    summary: 'Dry-run an automation against a media',
    description:
      'What a run on the media’s file (its `original`, else its first) would do, decided by the code a run uses: whether the trigger’s conditions hold (`would_start`), and for every step (`path` as `workflow[1].next[0]`) whether it would start (`runs`: `yes`, `no`, or `unknown` when that depends on an earlier step’s output), why, the file it works on, each condition with the value it compares and whether it passes (`passed: null` with `depends_on` when it reads an earlier step’s result, e.g. `metadata.nsfw.detected` after an nsfw step, or a file a step makes), the branch taken, and the problems (validation, input kind, engines) that would make it fail. Creates nothing: no task, event or file. It ignores whether the automation is active.',
  },
  'GET /automations/:id/runs': {
    id: 'listAutomationRuns',
    tag: 'Automations',
    summary: 'An automation’s run history',
    description:
      'The workflow tasks the automation started, newest first, each with the event that started it and its steps’ tasks (id, kind, status, timings, error).',
  },
  'GET /events': {
    id: 'listEvents',
    tag: 'Events',
    summary: 'List events',
    description: 'Newest first; filter by `type`: one type (`task.failed`) or every type of a resource (`task.*`).',
  },
  'GET /events/:id': {
    id: 'getEvent',
    tag: 'Events',
    summary: 'Get an event',
    description:
      'One event of the log (`evt_…`): its type, the resource as it was (`data`), and `cause` when an automation’s work caused it.',
  },
  'POST /webhooks': {
    id: 'createWebhook',
    tag: 'Webhooks',
    summary: 'Create a webhook endpoint',
    description: 'Its `whsec_…` secret is shown in this answer only.',
  },
  'GET /webhooks': {
    id: 'listWebhooks',
    tag: 'Webhooks',
    summary: 'List webhook endpoints',
    description:
      'Every endpoint of the project with its events, whether it is enabled, and why it was disabled. Never the secrets.',
  },
  'GET /webhooks/:id': {
    id: 'getWebhook',
    tag: 'Webhooks',
    summary: 'Get a webhook endpoint',
    description: 'One endpoint: its URL, events, `enabled`, `disabled_reason` and the failures in a row.',
  },
  'PATCH /webhooks/:id': {
    id: 'updateWebhook',
    tag: 'Webhooks',
    summary: 'Update a webhook endpoint',
    description:
      'Disabling (`enabled: false` or `status: "disabled"`) fails its pending deliveries; enabling resets its failure count and clears `disabled_reason` and `disabled_at`.',
  },
  'POST /webhooks/:id/test': {
    id: 'testWebhook',
    tag: 'Webhooks',
    summary: 'Send a test event',
    description:
      'Queues a `webhook.test` event (`data: {endpoint_id, message}`) for this endpoint only, sent and signed like every delivery; it appears in the delivery log (202 with the delivery) but not in the event log. A disabled endpoint answers 409.',
  },
  'DELETE /webhooks/:id': {
    id: 'deleteWebhook',
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint',
    description: 'The endpoint stops receiving events; its pending deliveries are marked failed.',
  },
  'POST /webhooks/:id/rotate-secret': {
    id: 'rotateWebhookSecret',
    tag: 'Webhooks',
    summary: 'Rotate an endpoint’s secret',
    description:
      'The old secret keeps signing beside the new one for 24 hours. Signing secrets are for owners and admins, full-access keys and keys scoped `secrets:write`: whoever holds one can sign deliveries that receivers accept as genuine. Members, viewers and other scopes get 403.',
  },
  'GET /webhooks/:id/deliveries': {
    id: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: 'List an endpoint’s deliveries',
    description: 'Newest first, each with every attempt (status code, duration, error).',
  },
  'GET /webhooks/:id/deliveries/:delivery_id': {
    id: 'getWebhookDelivery',
    tag: 'Webhooks',
    summary: 'Get a delivery',
    description: 'With every attempt and `payload`: the request body exactly as sent (the bytes the signature covers).',
  },
  'POST /webhooks/:id/deliveries/:delivery_id/retry': {
    id: 'retryWebhookDelivery',
    tag: 'Webhooks',
    summary: 'Send a delivery again now',
    description:
      'A failed delivery is sent again now with the same `webhook-id`; a pending one has its next attempt brought forward. Answers 202: the attempt runs in the background.',
  },
  'GET /project': {
    id: 'getProject',
    tag: 'Project',
    summary: 'Get the project',
    description:
      'The project of the key (or of `X-Mediad-Project`): its name, organisation, `require_signed_delivery` and default `api_version`.',
  },
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
    description:
      'The `whsec_…` secret that signs the project’s task webhooks (`webhook_url`), and during a rotation when the old one stops signing (`previous_secret_expires`). Signing secrets are for owners and admins, full-access keys and keys scoped `secrets:read` (to read) or `secrets:write` (to rotate): whoever holds one can sign deliveries that receivers accept as genuine. Members, viewers and other scopes get 403.',
  },
  'POST /project/webhook-secret/rotate': {
    id: 'rotateProjectWebhookSecret',
    tag: 'Project',
    summary: 'Rotate the task webhook secret',
    description:
      'The old secret keeps signing beside the new one for 24 hours. Signing secrets are for owners and admins, full-access keys and keys scoped `secrets:read` (to read) or `secrets:write` (to rotate): whoever holds one can sign deliveries that receivers accept as genuine. Members, viewers and other scopes get 403.',
  },
  'GET /requests': {
    id: 'listRequests',
    tag: 'Usage',
    summary: 'List the project’s requests',
    description:
      'Newest first: every API request made with a key, a session or a signed upload URL (method, path with secret query values redacted, status, time, key or user). Kept `MEDIAD_REQUEST_LOG_DAYS` days or `MEDIAD_REQUEST_LOG_MAX_ROWS` rows, whichever comes first. Filters: `status_class`, `method`, `key_id`, `user_id`, `created_after`, `created_before`.',
  },
  'GET /requests/:id': {
    id: 'getRequest',
    tag: 'Usage',
    summary: 'Get a request',
    description: 'By its request id (`x-request-id`, `meta.request_id`).',
  },
  'GET /usage': {
    id: 'getUsage',
    tag: 'Usage',
    summary: 'The project’s usage',
    description:
      '`range`: `24h` (per hour), `7d` or `30d` (per UTC day). Bytes delivered, processing seconds per task kind, tasks ended per status, as totals and as columns per bucket; storage used now.',
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
  'HEAD /d/*': {
    id: 'headFileBytes',
    tag: 'Delivery',
    summary: 'A file’s headers',
    description:
      'What `GET` would answer, without the bytes: `Content-Type`, `Content-Length`, `ETag`, `Last-Modified`, `Accept-Ranges`.',
    public: true,
  },
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
      '`scopes`: `full` (the default), or `<family>:read` / `<family>:write` for files, tasks, automations, events, webhooks, project, secrets (the webhook signing secrets); `expires` optional. The key itself is in this answer only.',
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
    description:
      '`setup_required` until the first owner is made with the setup URL printed at start; which sign-in methods are on (`password_sign_in`, `oidc` with the provider’s name and start URL).',
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
      'Sets the session cookie and answers the CSRF token. The same 401 whether the email is known or not; attempts are limited per account and per address. 403 `password_sign_in_disabled` when MEDIAD_PASSWORD_SIGN_IN=false.',
    public: true,
  },
  'GET /auth/oidc/start': {
    id: 'startOidcSignIn',
    tag: 'Accounts',
    summary: 'Sign in with the OpenID Connect provider',
    description:
      'A browser navigation: redirects to the provider (authorization code flow with PKCE, state and nonce in a 10-minute signed `__Host-mediad_oidc` cookie). When the provider is not set up or cannot be reached, redirects to `/app/sign-in?error=<code>`.',
    public: true,
  },
  'GET /auth/oidc/callback': {
    id: 'finishOidcSignIn',
    tag: 'Accounts',
    summary: 'The OpenID Connect provider’s answer',
    description:
      'Where the provider sends the browser back. Checks state, nonce and the PKCE verifier, takes the verified email, signs its user in (the same session cookie as `POST /auth/sign-in`) and redirects to `/app/`; otherwise to `/app/sign-in?error=<code>` with one of: ' +
      Object.keys(OIDC_SIGN_IN_ERRORS)
        .map((c) => `\`${c}\``)
        .join(', '),
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
  'PATCH /account': {
    id: 'updateAccount',
    tag: 'Accounts',
    summary: 'Update one’s name or theme',
    description:
      'Only the properties sent change: `name`, and `theme` (`light`, `dark` or `system`) that the web application applies.',
    session: true,
  },
  'POST /account/password': {
    id: 'changePassword',
    tag: 'Accounts',
    summary: 'Change one’s password',
    description: 'After the current one; the user’s other sessions end.',
    session: true,
  },
  'GET /account/sessions': {
    id: 'listSessions',
    tag: 'Accounts',
    summary: 'List one’s sessions',
    description:
      'The signed-in person’s sessions: created, last seen, address and browser; `current` marks the one making this request.',
    session: true,
  },
  'DELETE /account/sessions/:id': {
    id: 'revokeSession',
    tag: 'Accounts',
    summary: 'End one of one’s sessions',
    description: 'Ends that session at once (a browser holding it is signed out at its next request).',
    session: true,
  },
  'GET /orgs': {
    id: 'listOrgs',
    tag: 'Organisations',
    summary: 'List one’s organisations',
    description: 'The organisations the signed-in person belongs to, with their role in each.',
    session: true,
  },
  'GET /orgs/:id/projects': {
    id: 'listOrgProjects',
    tag: 'Organisations',
    summary: 'List an organisation’s projects',
    description: 'The organisation’s projects; another organisation’s id is a 404.',
    session: true,
  },
  'POST /orgs/:id/projects': {
    id: 'createOrgProject',
    tag: 'Organisations',
    summary: 'Create a project',
    description: 'Owners and admins of the organisation.',
    session: true,
  },
  'GET /queue': {
    id: 'getQueue',
    tag: 'Operations',
    summary: 'The organisation’s queue per task kind',
    description:
      'Every task kind with its tasks over all the organisation’s projects: `pending` (due, waiting for a worker), `delayed` (a retry waiting out its backoff), `processing`, `waiting` (workflows whose steps run), `failed` (in the last 24 hours), `oldest_pending_seconds`, and whether the kind is `paused`. Owners and admins, or a full-access key.',
  },
  'POST /queue/kinds/:kind/pause': {
    id: 'pauseQueueKind',
    tag: 'Operations',
    summary: 'Pause a task kind',
    description:
      'Workers stop claiming tasks of this kind for the organisation’s projects until it is resumed; they stay pending (new ones are still accepted) and tasks already running finish. Answers the kind’s counts. An unknown kind is a 400.',
  },
  'POST /queue/kinds/:kind/resume': {
    id: 'resumeQueueKind',
    tag: 'Operations',
    summary: 'Resume a task kind',
    description: 'Workers claim its pending tasks again (idle ones within `MEDIAD_WORKER_POLL_MS`).',
  },
  'GET /workers': {
    id: 'listWorkers',
    tag: 'Operations',
    summary: 'The worker processes alive',
    description:
      'Each process that runs tasks (`mediad worker`, or `serve` with workers): host, pid, concurrency, when it started, its last heartbeat, and the tasks it runs now that belong to the organisation (`current_task_id`, `current_tasks`). A process that stopped beating for a lease (`MEDIAD_WORKER_LEASE_SECONDS`) is left out.',
  },
  'GET /system': {
    id: 'getSystem',
    tag: 'Operations',
    summary: 'The system’s status',
    description:
      'The mediad version, the database backend (`sqlite` or `postgres`), the storage backend (`disk`, or `s3` with its bucket), FFmpeg and ffprobe, the intelligence engines (what `mediad doctor` reports, without loading the NSFW model, checked at most every 5 minutes per process) and the instance’s queue in total. Never a credential. Any authenticated caller.',
  },
  'POST /orgs': {
    id: 'createOrg',
    tag: 'Administration',
    summary: 'Create an organisation',
    description: 'Instance administrators; the creator becomes its owner. A name in use is a 409.',
    session: true,
  },
  'PATCH /orgs/:id': {
    id: 'renameOrg',
    tag: 'Administration',
    summary: 'Rename an organisation',
    description: 'Owners (and instance administrators).',
    session: true,
  },
  'DELETE /orgs/:id': {
    id: 'deleteOrg',
    tag: 'Administration',
    summary: 'Delete an organisation',
    description:
      'Owners, with `{"confirm": "<the exact name>"}` (otherwise 400 `confirmation_required`). The organisation and its projects disappear at once (their keys stop working); their rows and files are removed in the background.',
    session: true,
  },
  'PATCH /orgs/:id/projects/:project_id': {
    id: 'renameProject',
    tag: 'Administration',
    summary: 'Rename a project',
    description: 'Owners and admins.',
    session: true,
  },
  'DELETE /orgs/:id/projects/:project_id': {
    id: 'deleteProject',
    tag: 'Administration',
    summary: 'Delete a project',
    description:
      'Owners and admins, with `{"confirm": "<the exact name>"}`. The project disappears at once (its keys stop working, its tasks are cancelled); its rows and files are removed in the background.',
    session: true,
  },
  'GET /orgs/:id/members': {
    id: 'listMembers',
    tag: 'Administration',
    summary: 'List an organisation’s members',
    description: 'Every member with their role; any member may list them.',
    session: true,
  },
  'PATCH /orgs/:id/members/:user_id': {
    id: 'changeMemberRole',
    tag: 'Administration',
    summary: 'Change a member’s role',
    description:
      'Owners change any role; admins change admins, members and viewers. The last owner cannot be demoted (409 `last_owner`).',
    session: true,
  },
  'DELETE /orgs/:id/members/:user_id': {
    id: 'removeMember',
    tag: 'Administration',
    summary: 'Remove a member',
    description:
      'Owners remove anyone, admins anyone but owners; anyone may remove themselves. The last owner cannot be removed (409 `last_owner`).',
    session: true,
  },
  'POST /orgs/:id/invitations': {
    id: 'createInvitation',
    tag: 'Administration',
    summary: 'Invite someone',
    description:
      'Owners and admins (only owners invite owners). The answer’s `url` (`…/app/invite#token=…`) is shown once and works for `MEDIAD_INVITATION_HOURS`.',
    session: true,
  },
  'GET /orgs/:id/invitations': {
    id: 'listInvitations',
    tag: 'Administration',
    summary: 'List invitations',
    description: 'Owners and admins: every invitation with its email, role, status and expiry (never the link).',
    session: true,
  },
  'DELETE /orgs/:id/invitations/:invitation_id': {
    id: 'revokeInvitation',
    tag: 'Administration',
    summary: 'Revoke an invitation',
    description: 'Owners and admins: the link stops working (410 `invitation_revoked`).',
    session: true,
  },
  'POST /auth/accept-invitation': {
    id: 'acceptInvitation',
    tag: 'Administration',
    summary: 'Accept an invitation',
    description:
      'With a session whose email is the invitation’s, the membership is added; without one, a new user is made (`name` and `password` required) and signed in. An expired, revoked or used link is a 410 `invitation_expired`, 410 `invitation_revoked` or 409 `invitation_used`.',
    public: true,
  },
  'GET /orgs/:id/audit': {
    id: 'listOrgAudit',
    tag: 'Administration',
    summary: 'Read an organisation’s audit log',
    description:
      'Owners and admins. Newest first; filter by `action`, `actor` (a user or key id), `created_after`, `created_before`.',
    session: true,
  },
  'GET /audit': {
    id: 'listAudit',
    tag: 'Administration',
    summary: 'Read the whole audit log',
    description:
      'Instance administrators: every organisation’s records, and those of none (failed sign-ins of unknown emails).',
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
  // Image URLs (issue 24)
  'GET /img/*': {
    id: 'getImage',
    tag: 'Image URLs',
    summary: 'Get an image by its image URL',
    description:
      'The image the URL’s options make from the file (`/img/<project>/<signature>/<options>/<file id>[.<ext>]`), made once and then served from the cache: `ETag`, `304`, `Range`, `Cache-Control: public, max-age=31536000, immutable`. A signature that does not match is 403 before anything is read; another project’s file is 404; audio and other files are 415; past the project’s misses per minute 429 with `Retry-After`.',
    public: true,
  },
  'HEAD /img/*': {
    id: 'headImage',
    tag: 'Image URLs',
    summary: 'An image’s headers',
    description: 'What `GET` would answer, without the bytes.',
    public: true,
  },
  'GET /project/image-url-key': {
    id: 'getImageUrlKey',
    tag: 'Image URLs',
    summary: 'Get the image-URL key’s prefix',
    description:
      'The key that signs the project’s image URLs, as its first characters and dates (made on first use); never the key itself: `POST /project/image-url-key/reveal` shows it.',
  },
  'POST /project/image-url-key': {
    id: 'createImageUrlKey',
    tag: 'Image URLs',
    summary: 'Make the image-URL key',
    description:
      'Makes the project’s image-URL key when it has none (it is also made on first use); answers its prefix.',
  },
  'POST /project/image-url-key/reveal': {
    id: 'revealImageUrlKey',
    tag: 'Image URLs',
    summary: 'Reveal the image-URL key',
    description:
      'The `imk_…` key that signs image URLs (HMAC-SHA256, docs/image-urls.md). Signing secrets are for owners and admins, full-access keys and keys scoped `secrets:read`/`secrets:write`; others get 403. Recorded in the audit log.',
  },
  'POST /project/image-url-key/rotate': {
    id: 'rotateImageUrlKey',
    tag: 'Image URLs',
    summary: 'Rotate the image-URL key',
    description:
      'A new key, shown in this answer; URLs signed with the old one keep working for 24 hours. Owners and admins, full-access keys and keys scoped `secrets:write`.',
  },
  'GET /project/image-url-settings': {
    id: 'getImageUrlSettings',
    tag: 'Image URLs',
    summary: 'Get the image URL settings',
    description:
      'Whether unsigned URLs of named presets (`/img/<project>/_/preset:<name>/<file id>`) are served, and the project’s share of the image cache: its own budget `cache_bytes` (`null`: the server’s default), the budget in force, the server’s default and maximum, and the bytes and number of results the project’s cached images take now.',
  },
  'PATCH /project/image-url-settings': {
    id: 'updateImageUrlSettings',
    tag: 'Image URLs',
    summary: 'Change the image URL settings',
    description:
      '`allow_unsigned_presets`: serve unsigned URLs that name a preset only (off by default). `cache_bytes`: the bytes of cached results the project may keep (an integer ≥ 0; `null`: the server’s default; above the whole cache’s budget: lowered to it); past it the project’s own least recently served results are deleted first, at once when the budget is lowered.',
  },
  'GET /image-presets': {
    id: 'listImagePresets',
    tag: 'Image URLs',
    summary: 'List image presets',
    description: 'The project’s named option sets, by name.',
  },
  'POST /image-presets': {
    id: 'createImagePreset',
    tag: 'Image URLs',
    summary: 'Make an image preset',
    description:
      'A named set of image URL options (`preset:<name>` in a URL); each option is checked as in a URL. At most 100 per project.',
  },
  'GET /image-presets/:name': {
    id: 'getImagePreset',
    tag: 'Image URLs',
    summary: 'Get an image preset',
    description: 'One preset by its name.',
  },
  'PUT /image-presets/:name': {
    id: 'replaceImagePreset',
    tag: 'Image URLs',
    summary: 'Change an image preset',
    description:
      'Replaces the preset’s options. Cached results of the old options stay until evicted; unsigned preset URLs are cached by browsers for an hour.',
  },
  'DELETE /image-presets/:name': {
    id: 'deleteImagePreset',
    tag: 'Image URLs',
    summary: 'Delete an image preset',
    description: 'URLs naming it answer 400 from then on.',
  },
  'POST /image-urls': {
    id: 'createImageUrl',
    tag: 'Image URLs',
    summary: 'Sign an image URL',
    description:
      'A signed image URL for a file and options, for clients that do not sign themselves; with `widths`, a `srcset` of one URL per width (the height scaled to keep the ratio).',
  },
  // Resumable uploads (issue 25): tus 1.0 (docs/uploads.md).
  'POST /uploads': {
    id: 'createUploadToken',
    tag: 'Uploads',
    summary: 'Make an upload token',
    description:
      'A short-lived token (`mdu_…`, default 1 hour, `expires_in` 60 s to 24 h) that authenticates tus requests to `/uploads/tus` for this project and nothing else, so a browser can upload without an API key. Shown in this answer only.',
  },
  'OPTIONS /uploads/tus': {
    id: 'tusOptions',
    tag: 'Uploads',
    summary: 'tus capabilities',
    description:
      '204 with `Tus-Version: 1.0.0`, `Tus-Extension: creation,creation-with-upload,creation-defer-length,termination,expiration,checksum`, `Tus-Checksum-Algorithm: sha1,sha256,md5` and `Tus-Max-Size` (MEDIAD_MAX_FILE_BYTES); with an `Origin`, the CORS preflight answer (any origin, no credentials). No key needed.',
    public: true,
  },
  'OPTIONS /uploads/tus/:id': {
    id: 'tusOptionsUpload',
    tag: 'Uploads',
    summary: 'CORS preflight of an upload',
    description:
      'The same answer as `OPTIONS /uploads/tus`, for the preflight a browser on another origin sends before `PATCH`, `HEAD` or `DELETE`. No key needed.',
    public: true,
  },
  'POST /uploads/tus': {
    id: 'tusCreate',
    tag: 'Uploads',
    summary: 'Create a resumable upload',
    description:
      '`Tus-Resumable: 1.0.0`, `Upload-Length` (or `Upload-Defer-Length: 1`) and `Upload-Metadata` with `filename`, `filetype`, `folder`, `ref`, `media_id`, `metadata` (a JSON object), checked now (400/404/409). 201 with `Location`, the upload URL; with `Content-Type: application/offset+octet-stream` the body is the first chunk. 413 when `Upload-Length` is over MEDIAD_MAX_FILE_BYTES.',
  },
  'HEAD /uploads/tus/:id': {
    id: 'tusHead',
    tag: 'Uploads',
    summary: 'Where an upload stands',
    description:
      '`Upload-Offset` (bytes received) and `Upload-Length`; once complete, `Mediad-File-Id` names the file it became. 410 `upload_expired` after MEDIAD_UPLOAD_EXPIRY_HOURS unfinished; another project’s upload is a 404.',
  },
  'PATCH /uploads/tus/:id': {
    id: 'tusPatch',
    tag: 'Uploads',
    summary: 'Send a chunk',
    description:
      '`Content-Type: application/offset+octet-stream` (else 415), `Upload-Offset` equal to the upload’s (else 409), optional `Upload-Checksum: sha1|sha256|md5 <base64>` (460 `checksum_mismatch` keeps nothing). 204 with the new `Upload-Offset`; the last chunk makes the file (probed, limits, media, `file.created`, automations) and the answer carries `Mediad-File-Id`.',
  },
  'DELETE /uploads/tus/:id': {
    id: 'tusTerminate',
    tag: 'Uploads',
    summary: 'Abandon an upload',
    description: 'Removes an unfinished upload and its bytes (tus termination). 204.',
  },
};
