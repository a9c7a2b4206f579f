// Engine status for `mediad doctor`: is each local engine installed, which version, which model;
// can a provider be reached and which models does it list. Never throws.
import {
  DEFAULT_POCKETSPHINX_MODEL,
  ffmpegHasFilter,
  missingModelFiles,
  runTool,
  toolVersion,
  type PocketsphinxModel,
} from '../media/index.js';
import { isProviderError } from './errors.js';
import { missingNsfwPackages, nsfwModel, nsfwModelLoads, NSFW_MODEL_NAME } from './nsfw/model.js';
import { listModels } from './provider/models.js';
import type { ProviderEndpoint } from './provider/client.js';
import { pocketsphinxVersion } from './speech/local.js';

export interface EngineStatus {
  engine: string;
  /** Installed and its model present: the engine can run. */
  found: boolean;
  version: string | null;
  model: string | null;
  /** What to do when it is not found, or a note. */
  message?: string;
}

export async function speechEngineStatus(model: PocketsphinxModel = DEFAULT_POCKETSPHINX_MODEL): Promise<EngineStatus> {
  const run = await runTool(model.binary, ['-help', 'yes']);
  const missing = await missingModelFiles(model);
  const found = run.found && missing.length === 0;
  const message = !run.found
    ? `${model.binary} not found: apt-get install -y pocketsphinx pocketsphinx-en-us`
    : missing.length > 0
      ? `model files missing (${missing.join(', ')}): apt-get install -y pocketsphinx-en-us`
      : undefined;
  return {
    engine: 'pocketsphinx',
    found,
    version: run.found ? await pocketsphinxVersion() : null,
    model: model.name,
    ...(message ? { message } : {}),
  };
}

export async function ocrEngineStatus(binary = 'tesseract', language = 'eng'): Promise<EngineStatus> {
  const version = await toolVersion(binary, ['--version'], /tesseract\s+v?(\d[\w.-]*)/i);
  if (version === null)
    return {
      engine: 'tesseract',
      found: false,
      version: null,
      model: null,
      message: `${binary} not found: apt-get install -y tesseract-ocr tesseract-ocr-eng`,
    };
  const langs = (await runTool(binary, ['--list-langs'])).output.split('\n').map((l) => l.trim());
  const found = language.split('+').every((l) => langs.includes(l));
  return {
    engine: 'tesseract',
    found,
    version,
    model: language,
    ...(found
      ? {}
      : { message: `tesseract has no "${language}" data: apt-get install -y tesseract-ocr-${language.split('+')[0]}` }),
  };
}

export async function sceneEngineStatus(): Promise<EngineStatus> {
  const found = await ffmpegHasFilter('scdet');
  return {
    engine: 'ffmpeg-scdet',
    found,
    version: null,
    model: null,
    ...(found ? {} : { message: 'this ffmpeg has no scdet filter (FFmpeg 4.4 or newer has it)' }),
  };
}

/**
 * With `load`, loads the model (about a second) to prove it runs; otherwise checks that its
 * packages are installed and reports whether it is warm.
 */
export async function nsfwEngineStatus(opts: { load?: boolean } = {}): Promise<EngineStatus> {
  const missing = missingNsfwPackages();
  if (missing.length > 0)
    return {
      engine: 'nsfwjs',
      found: false,
      version: null,
      model: NSFW_MODEL_NAME,
      message: `npm packages missing (${missing.join(', ')}): run npm install`,
    };
  try {
    if (opts.load || nsfwModelLoads() > 0) {
      const model = await nsfwModel();
      return {
        engine: 'nsfwjs',
        found: true,
        version: model.engine.version,
        model: NSFW_MODEL_NAME,
        message: `loaded in ${Math.round(model.loadMs)} ms, TensorFlow.js WASM backend`,
      };
    }
    return {
      engine: 'nsfwjs',
      found: true,
      version: null,
      model: NSFW_MODEL_NAME,
      message: 'not loaded yet (loads on first use)',
    };
  } catch (err) {
    return {
      engine: 'nsfwjs',
      found: false,
      version: null,
      model: NSFW_MODEL_NAME,
      message: `the model could not load: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

export interface ProviderStatus {
  reachable: boolean;
  /** Models `GET /models` lists (empty when unreachable). */
  models: string[];
  /** The provider's HTTP status when it answered with an error. */
  status?: number | null;
  message?: string;
}

export async function providerStatus(ep: ProviderEndpoint, signal?: AbortSignal): Promise<ProviderStatus> {
  try {
    return { reachable: true, models: await listModels(ep, signal) };
  } catch (err) {
    if (isProviderError(err)) {
      // An HTTP error answer still proves the provider is reachable (e.g. a bad key: 401).
      return { reachable: err.status !== null, models: [], status: err.status, message: err.message };
    }
    return { reachable: false, models: [], message: err instanceof Error ? err.message : String(err) };
  }
}
