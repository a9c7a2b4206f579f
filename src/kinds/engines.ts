import { Type } from 'typebox';
import type { Config } from '../config.js';
import {
  EngineUnavailableError,
  nsfwEngineStatus,
  ocrEngineStatus,
  sceneEngineStatus,
  speechEngineStatus,
  type EngineStatus,
} from '../ai/index.js';

// The engine choice of the intelligence kinds, in one place: decided from what is configured and
// what is installed, the same way when a task is created (a refusal is 422 engine_unavailable
// saying exactly what to set or install) and when it runs. The provider runs when configured,
// else the local engine; a task's `engine` option (`local` | `provider`) overrides that.

export type EngineName = 'local' | 'provider';

/** The engine a kind runs with, or why it cannot run with what this mediad has. */
export type EnginePlan<P> = { plan: P } | { refused: string };

/** The `engine` option every intelligence kind takes. */
export const EngineOption = Type.Optional(Type.Enum(['local', 'provider']));

/** The local engines of this machine, as found. */
export interface LocalEngines {
  speech: EngineStatus;
  ocr: EngineStatus;
  nsfw: EngineStatus;
  scenes: EngineStatus;
}

/** What this process can run: the provider's models as configured, the local engines as found. */
export interface Engines {
  chatModel: string | null;
  transcribeModel: string | null;
  local: LocalEngines;
}

let found: Promise<LocalEngines> | null = null;

/**
 * The local engines, looked for once per process (about 0.3 s: each binary started once):
 * installing one takes a restart, as docs/tasks.md says.
 */
export function localEngines(): Promise<LocalEngines> {
  found ??= (async () => {
    const [speech, ocr, nsfw, scenes] = await Promise.all([
      speechEngineStatus(),
      ocrEngineStatus(),
      nsfwEngineStatus(),
      sceneEngineStatus(),
    ]);
    return { speech, ocr, nsfw, scenes };
  })();
  return found;
}

/** The configuration's models and the local engines found. */
export async function enginesOf(config: Pick<Config, 'ai'>): Promise<Engines> {
  return {
    chatModel: config.ai.chat?.model ?? null,
    transcribeModel: config.ai.transcribe?.model ?? null,
    local: await localEngines(),
  };
}

export const SET_CHAT =
  'set MEDIAD_AI_BASE_URL and MEDIAD_AI_CHAT_MODEL (a vision-capable chat model on an OpenAI-compatible server such as llama.cpp, Ollama, vLLM or a cloud; MEDIAD_AI_API_KEY when it needs a key) and restart mediad';
export const SET_TRANSCRIBE =
  'set MEDIAD_AI_TRANSCRIBE_MODEL with MEDIAD_AI_BASE_URL or MEDIAD_AI_TRANSCRIBE_BASE_URL (an OpenAI-compatible /v1/audio/transcriptions server such as whisper.cpp or faster-whisper; MEDIAD_AI_API_KEY when it needs a key) and restart mediad';

/** The language the local speech model recognises (Debian's pocketsphinx-en-us). */
export const LOCAL_SPEECH_LANGUAGE = 'en';

const refused = (message: string): { refused: string } => ({ refused: message });
const use = (engine: EngineName): { plan: EngineName } => ({ plan: engine });

/** Speech-to-text for speech and subtitles (and the transcripts other kinds use). */
export function speechPlan(
  kind: string,
  requested: EngineName | undefined,
  e: Engines,
  language?: string,
): EnginePlan<EngineName> {
  const localProblem = !e.local.speech.found
    ? `the local speech engine is not installed (${e.local.speech.message ?? 'pocketsphinx'})`
    : language && language !== LOCAL_SPEECH_LANGUAGE
      ? `the local speech engine (pocketsphinx, en-us model) recognises English only, not "${language}"`
      : null;
  if (requested === 'provider')
    return e.transcribeModel
      ? use('provider')
      : refused(`${kind} with engine "provider" needs a speech-to-text provider: ${SET_TRANSCRIBE}`);
  if (requested === 'local')
    return localProblem ? refused(`${kind} with engine "local" cannot run: ${localProblem}`) : use('local');
  if (e.transcribeModel) return use('provider');
  return localProblem
    ? refused(`${kind} needs a speech engine and ${localProblem}; or ${SET_TRANSCRIBE}`)
    : use('local');
}

/**
 * Kinds whose better engine is the chat model: with `localProblem` null they also run locally
 * (a lesser but honest result), else that problem says why they cannot.
 */
export function chatPlan(
  kind: string,
  requested: EngineName | undefined,
  e: Engines,
  localProblem: string | null,
): EnginePlan<EngineName> {
  if (requested === 'provider')
    return e.chatModel ? use('provider') : refused(`${kind} with engine "provider" needs a chat model: ${SET_CHAT}`);
  if (requested === 'local')
    return localProblem ? refused(`${kind} with engine "local" cannot run: ${localProblem}`) : use('local');
  if (e.chatModel) return use('provider');
  return localProblem ? refused(`${kind} cannot run: ${localProblem}; or ${SET_CHAT}`) : use('local');
}

/**
 * The speech engine for a transcript that helps another kind (chapters, description, outline):
 * never a refusal — without one the kind does without speech. `local` keeps it on this machine.
 */
export function helperSpeech(requested: EngineName | undefined, e: Engines): EngineName | null {
  if (requested !== 'local' && e.transcribeModel) return 'provider';
  return e.local.speech.found ? 'local' : null;
}

/**
 * The plan when a task runs; a refusal now (the configuration changed since the task was
 * created) fails it with engine_unavailable and the same message.
 */
export function chosen<P>(kind: string, plan: EnginePlan<P>): P {
  if ('refused' in plan) throw new EngineUnavailableError(kind, plan.refused);
  return plan.plan;
}

/** One engine that contributed to an output, or was left out and why (the `engines` list of outputs). */
export interface EngineUse {
  role: string;
  name: string;
  model: string | null;
  version: string | null;
  note?: string;
}

export function engineUse(
  role: string,
  info: { name: string; model: string | null; version: string | null },
  note?: string,
): EngineUse {
  return { role, name: info.name, model: info.model, version: info.version, ...(note ? { note } : {}) };
}
