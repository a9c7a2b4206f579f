import type { Generated } from 'kysely';

// Column types chosen to mean the same on SQLite and PostgreSQL: timestamps are
// ISO-8601 UTC strings (they sort as text), JSON is text, booleans are 0/1 integers.
// bigint columns are parsed to numbers for pg in db/connect.ts (sizes stay below 2^53).

export interface OrgsTable {
  id: string;
  name: string;
  created: string;
  /** When it was deleted: gone from every list at once, its rows removed by the purge (services/operations/purge.ts). */
  deleted: string | null;
}

export interface ProjectsTable {
  id: string;
  org_id: string;
  name: string;
  signing_secret: string;
  webhook_secret: string;
  webhook_secret_previous: string | null;
  webhook_secret_rotated: string | null;
  require_signed_delivery: number;
  /** The API version of requests that name none (http/version.ts). */
  api_version: string;
  created: string;
  /** When it was deleted: its keys stop working at once, its rows and blobs go in the purge. */
  deleted: string | null;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  key_hash: string;
  hint: string;
  name: string | null;
  created: string;
  last_used: string | null;
  revoked: string | null;
  /** JSON array of scopes (services/access.ts); null: full access. */
  scopes: string | null;
  expires: string | null;
  /** When the key was paused (it answers 401 until resumed); null when active. */
  paused: string | null;
  /** The user who made it; null for keys made with the CLI. */
  created_by: string | null;
}

export type Role = 'owner' | 'admin' | 'member' | 'viewer';

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  /** PHC string (services/people/passwords.ts). */
  password_hash: string;
  status: 'active' | 'disabled';
  /** Instance administrator (the first user). */
  is_admin: number;
  theme: 'light' | 'dark' | 'system';
  created: string;
  updated: string;
  last_sign_in: string | null;
}

export interface MembershipsTable {
  user_id: string;
  org_id: string;
  role: Role;
  created: string;
}

export interface SessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  /** Sent back by the app in X-CSRF-Token on unsafe requests. */
  csrf_token: string;
  user_agent: string | null;
  ip: string | null;
  created: string;
  last_seen: string;
  /** Absolute end; the idle end is last_seen plus the idle timeout. */
  expires: string;
  revoked: string | null;
}

export interface SetupTokensTable {
  token_hash: string;
  created: string;
  used: string | null;
}

export interface InvitationsTable {
  id: string;
  org_id: string;
  email: string;
  role: Role;
  /** SHA-256 of the link's token (the token itself is shown once). */
  token_hash: string;
  created_by: string | null;
  created: string;
  expires: string;
  accepted: string | null;
  accepted_by: string | null;
  revoked: string | null;
}

export interface AuditLogTable {
  id: string;
  /** Null for what belongs to no organisation (a sign-in failure with an unknown email). */
  org_id: string | null;
  project_id: string | null;
  actor_type: 'user' | 'key' | 'anonymous' | 'system';
  actor_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  /** JSON object; never secrets (services/audit.ts scrubs them). */
  details: string;
  ip: string | null;
  created: string;
}

export interface MediaTable {
  id: string;
  project_id: string;
  kind: string | null;
  title: string | null;
  alt: string | null;
  width: number | null;
  height: number | null;
  duration: number | null;
  background: string | null;
  metadata: string;
  created: string;
  updated: string;
}

export interface FilesTable {
  id: string;
  project_id: string;
  media_id: string;
  kind: string;
  format: string | null;
  type: string;
  width: number | null;
  height: number | null;
  duration: number | null;
  filesize: number;
  folder: string;
  filename: string;
  ref: string | null;
  metadata: string;
  status: string;
  blob_key: string;
  /** ProbeResult as JSON (null for files that are not media, such as VTT tracks). */
  probe: string | null;
  created: string;
  updated: string;
}

export interface EventsTable {
  seq: Generated<number>;
  id: string;
  project_id: string;
  type: string;
  data: string;
  created: string;
  dispatched: Generated<number>;
  /** The automations whose runs caused this event, as a JSON array (null: a client's request did). */
  chain: string | null;
}

export interface AutomationsTable {
  id: string;
  project_id: string;
  name: string | null;
  description: string | null;
  trigger: string;
  workflow: string;
  status: 'active' | 'paused';
  created: string;
  updated: string;
}

export interface AutomationRunsTable {
  event_id: string;
  automation_id: string;
  task_id: string;
  created: string;
}

export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  url: string;
  events: string;
  description: string | null;
  status: 'active' | 'disabled';
  secret: string;
  secret_previous: string | null;
  secret_rotated: string | null;
  failed_deliveries: number;
  created: string;
  updated: string;
  /** Why the endpoint was disabled (410 Gone, failures, a user), and when; null while active. */
  disabled_reason: string | null;
  disabled_at: string | null;
}

export interface IdempotencyKeysTable {
  project_id: string;
  key: string;
  fingerprint: string;
  state: 'running' | 'done';
  status_code: number | null;
  response_body: string | null;
  created: string;
  expires: string;
}

export interface CountersTable {
  project_id: string;
  resource: string;
  count: number;
}

/**
 * A batch of one project's API requests, a line each (db/request-log-segments.ts encodes them):
 * services/operations/recorder.ts writes one per project per flush; retention deletes whole segments.
 */
export interface RequestLogSegmentsTable {
  /** The order segments were written in (SQLite's rowid): orders the log, bounds pruning. */
  seq: Generated<number>;
  project_id: string;
  /** The smallest and the largest request id in the segment (request ids are time-ordered). */
  first_id: string;
  last_id: string;
  /** The earliest and the latest `created` in the segment. */
  first_created: string;
  last_created: string;
  rows: number;
  /** Requests per status class. */
  n2xx: number;
  n3xx: number;
  n4xx: number;
  n5xx: number;
  body: string;
}

/** A usage figure of a project for one UTC hour ('h', bucket YYYY-MM-DDTHH) or day ('d', YYYY-MM-DD). */
export interface UsageCountersTable {
  project_id: string;
  period: 'h' | 'd';
  bucket: string;
  /** bytes_delivered, task_ms:<kind>, tasks:<completed|failed|cancelled> (db/queries/usage.ts). */
  metric: string;
  value: number;
}

export type TaskStatus = 'pending' | 'processing' | 'waiting' | 'completed' | 'failed' | 'cancelled';

export interface TasksTable {
  id: string;
  project_id: string;
  kind: string;
  status: TaskStatus;
  input_file_id: string | null;
  input_url: string | null;
  input: string | null;
  options: string;
  /** Where the output goes: {folder?, filename?, ref?} as JSON. */
  target: string;
  output: string | null;
  output_file_id: string | null;
  error: string | null;
  progress: number;
  webhook_url: string | null;
  attempts: number;
  max_attempts: number;
  run_after: string;
  lease_owner: string | null;
  lease_expires: string | null;
  created: string;
  updated: string;
  started: string | null;
  finished: string | null;
  parent_id: string | null;
  automation_id: string | null;
  /** The workflow step this task runs (its options and `next`), for workflow children. */
  step: string | null;
  /** conditions tasks: {passed, failed, continue}. */
  results: string | null;
  /** The automations whose runs led to this task, as a JSON array (null: a client's request did). */
  chain: string | null;
  /** The failed or cancelled task this one runs again. */
  retry_of: string | null;
  /** When its output first became playable while it still ran (adaptive_video), else null. */
  playable_at: string | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  project_id: string;
  task_id: string | null;
  url: string;
  event_type: string;
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt: string;
  lease_expires: string | null;
  created: string;
  updated: string;
  endpoint_id: string | null;
  event_id: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created: string;
}

export interface BlobJournalTable {
  blob_key: string;
  op: 'put' | 'delete';
  /** The process that wrote the entry (host:pid:instance), so a dead one's entries are swept at once. */
  owner: string;
  created: string;
}

/** A task kind that workers do not claim for an organisation's projects until resumed. */
export interface QueuePausesTable {
  org_id: string;
  kind: string;
  paused: string;
}

/** A worker pool (one per process that runs tasks), kept by its heartbeats. */
/** What automations started for the work one root event caused (services/media/automation-runs.ts). */
export interface ChainBudgetsTable {
  root: string;
  project_id: string;
  /** Tasks counted against the chain's budget: each run's workflow task and its steps. */
  tasks: number;
  created: string;
}

/** An automation skipped in a chain, once per chain, reason and automation ('*' for the budget). */
export interface ChainSkipsTable {
  root: string;
  reason: string;
  automation_id: string;
  project_id: string;
  created: string;
}

/** Data passes that have run (services/media/stored-secrets.ts), by name. */
export interface DataPassesTable {
  name: string;
  done: string;
}

export interface WorkersTable {
  /** The pool's lease owner (`host:pid:random`): the tasks it runs carry it in lease_owner. */
  id: string;
  host: string;
  pid: number;
  concurrency: number;
  started: string;
  heartbeat: string;
}

// Resumable uploads (issue 25).
/** A tus upload of a project: the file fields checked at creation (JSON), and its file once complete. */
export interface UploadsTable {
  id: string;
  project_id: string;
  /** Upload-Length, null while deferred. */
  length: number | null;
  input: string;
  file_id: string | null;
  created: string;
  expires: string;
}

/** A short-lived upload token (mdu_…): its SHA-256 only. */
export interface UploadTokensTable {
  id: string;
  project_id: string;
  token_hash: string;
  created: string;
  expires: string;
}

export interface Database {
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  setup_tokens: SetupTokensTable;
  invitations: InvitationsTable;
  audit_log: AuditLogTable;
  blob_journal: BlobJournalTable;
  automations: AutomationsTable;
  automation_runs: AutomationRunsTable;
  webhook_endpoints: WebhookEndpointsTable;
  tasks: TasksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  orgs: OrgsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  media: MediaTable;
  files: FilesTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  counters: CountersTable;
  queue_pauses: QueuePausesTable;
  workers: WorkersTable;
  request_log_segments: RequestLogSegmentsTable;
  usage_counters: UsageCountersTable;
  data_passes: DataPassesTable;
  chain_budgets: ChainBudgetsTable;
  chain_skips: ChainSkipsTable;
  // Image URLs (issue 24)
  image_url_settings: ImageUrlSettingsTable;
  image_presets: ImagePresetsTable;
  image_derivatives: ImageDerivativesTable;
  // Resumable uploads (issue 25).
  uploads: UploadsTable;
  upload_tokens: UploadTokensTable;
}

// Image URLs (issue 24): migrations/014-image-urls.ts.
export interface ImageUrlSettingsTable {
  project_id: string;
  /** The imk_… key, sealed. */
  key: string;
  key_previous: string | null;
  key_rotated: string | null;
  key_created: string;
  allow_unsigned_presets: number;
  updated: string;
  /** The project's cache budget in bytes (migrations/017); null: MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES. */
  cache_bytes: number | null;
}

export interface ImagePresetsTable {
  project_id: string;
  name: string;
  options: string;
  created: string;
  updated: string;
}

/** A cached image-URL result; its bytes are the blob at blob_key. */
export interface ImageDerivativesTable {
  id: string;
  project_id: string;
  file_id: string;
  blob_key: string;
  type: string;
  size: number;
  created: string;
  last_used: string;
}
