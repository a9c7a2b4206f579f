import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { isSealed } from '../../secrets/sealer.js';
import { carrySealed, mapStepSecrets, mapTaskSecrets, redactedPlaces } from '../../secrets/secret-options.js';

// Secret options on their way in and out of the database (secrets/ explains what and why).

type Json = Record<string, unknown>;
type Sealing = Pick<Deps, 'secrets'>;

/** Seals a secret value for its project, once (a value sealed before is kept as it is). */
const sealOnce = (deps: Sealing, projectId: string) => (v: string) =>
  isSealed(v) ? v : deps.secrets.seal(v, projectId);

/** A task's options as stored: every secret value sealed for its project. */
export function sealTaskOptions(deps: Sealing, projectId: string, kind: string, options: Json): Json {
  return mapTaskSecrets(kind, options, sealOnce(deps, projectId));
}

/** A task's options as the client sent them (a retry sends them again), every secret revealed. */
export function revealTaskOptions(deps: Sealing, projectId: string, kind: string, options: Json): Json {
  return mapTaskSecrets(kind, options, (v) => deps.secrets.reveal(v, projectId));
}

/** The options a task runs with: its own secrets revealed, its workflow's steps left sealed (they become tasks). */
export function runOptions(deps: Sealing, projectId: string, kind: string, options: Json): Json {
  return mapTaskSecrets(kind, options, (v) => deps.secrets.reveal(v, projectId), { steps: false });
}

/**
 * An automation's workflow as stored. A workflow sent back after it was read has REDACTED where
 * its header values were: each keeps the value it had at the same place (`before`); one with no
 * value to keep is refused, naming its place.
 */
export function sealWorkflow(deps: Sealing, projectId: string, workflow: unknown[], before?: unknown): unknown[] {
  const carried = before === undefined ? workflow : carrySealed(workflow, before);
  const missing = redactedPlaces(carried);
  if (missing.length > 0)
    throw new AppError(
      'validation_failed',
      `header values are never shown (they read REDACTED); send the value of ${missing.join(', ')} again`,
      { details: missing.map((field) => ({ field, message: 'send the header value, not REDACTED' })) },
    );
  return sealSteps(deps, projectId, carried);
}

/** Workflow steps with every secret value sealed. */
export function sealSteps(deps: Sealing, projectId: string, steps: unknown): unknown[] {
  return mapStepSecrets(steps, sealOnce(deps, projectId)) as unknown[];
}
