// The nsfwjs MobileNetV2 model (shipped inside the npm package) on TensorFlow.js with the WASM
// backend, loaded once per process and kept warm. Only the parts of TF.js the model needs are
// installed (core, layers, the WASM backend), not the @tensorflow/tfjs umbrella: nsfwjs's own
// entry point imports the umbrella, so we take its model definition and run the same steps as
// NSFWJS.infer (x / 255 on a 224x224 RGB batch of one, then predict) ourselves.
// TF.js is imported on first use: importing it costs ~0.7 s and ~50 MB, which processes that
// never classify an image should not pay.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readFile } from 'node:fs/promises';
import type * as Tf from '@tensorflow/tfjs-core';
import type { RgbImage } from '../../media/index.js';
import type { EngineInfo } from '../engine.js';
import { classesFromOutput, type NsfwClasses } from './scores.js';

export const NSFW_INPUT_SIZE = 224;
export const NSFW_MODEL_NAME = 'MobileNetV2';

export interface NsfwModel {
  classify(image: RgbImage): Promise<NsfwClasses>;
  engine: EngineInfo;
  loadMs: number;
}

const require = createRequire(import.meta.url);
let loading: Promise<NsfwModel> | null = null;
let loads = 0;

/** How often the model was loaded in this process (1 once warm; tests hold it to that). */
export function nsfwModelLoads(): number {
  return loads;
}

export function nsfwModelLoaded(): boolean {
  return loading !== null && loads > 0;
}

async function packageVersion(entry: string): Promise<string | null> {
  // nsfwjs's exports map hides package.json: find it from the resolved entry point.
  let dir = dirname(require.resolve(entry));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    const text = await readFile(join(dir, 'package.json'), 'utf8').catch(() => null);
    const parsed: unknown = text ? JSON.parse(text) : null;
    if (
      parsed &&
      typeof parsed === 'object' &&
      'name' in parsed &&
      parsed.name === entry &&
      'version' in parsed &&
      typeof parsed.version === 'string'
    )
      return parsed.version;
  }
  return null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** The model JSON and the base64 weights bundled in nsfwjs, as TF.js model artifacts. */
async function artifacts(): Promise<Tf.io.ModelArtifacts> {
  const { MobileNetV2Model } = await import('nsfwjs/models/mobilenet_v2');
  const json: unknown = (await MobileNetV2Model.modelJson()).default;
  const weightLoader = MobileNetV2Model.weightBundles[0];
  if (!weightLoader || !isRecord(json) || !Array.isArray(json.weightsManifest))
    throw new Error('nsfwjs MobileNetV2 model files are not as expected');
  const weights: unknown = (await weightLoader()).default;
  if (typeof weights !== 'string') throw new Error('nsfwjs MobileNetV2 weights are not as expected');
  const bytes = Buffer.from(weights, 'base64');
  const weightSpecs: Tf.io.WeightsManifestEntry[] = json.weightsManifest.flatMap((g: unknown) =>
    isRecord(g) && Array.isArray(g.weights) ? g.weights : [],
  );
  return {
    modelTopology: isRecord(json.modelTopology) ? json.modelTopology : {},
    format: typeof json.format === 'string' ? json.format : undefined,
    weightSpecs,
    weightData: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
  };
}

async function load(): Promise<NsfwModel> {
  const started = performance.now();
  const tf = await import('@tensorflow/tfjs-core');
  const { loadLayersModel } = await import('@tensorflow/tfjs-layers');
  const { setWasmPaths } = await import('@tensorflow/tfjs-backend-wasm');
  const wasm = require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm');
  setWasmPaths(`${dirname(wasm)}/`);
  if (!(await tf.setBackend('wasm'))) throw new Error('the TensorFlow.js WASM backend could not start');
  await tf.ready();
  const model = await loadLayersModel(tf.io.fromMemory(await artifacts()));
  // One prediction now, as nsfwjs does, so the first real image does not pay for kernel setup.
  tf.tidy(() => model.predict(tf.zeros([1, NSFW_INPUT_SIZE, NSFW_INPUT_SIZE, 3])));
  loads++;
  const engine: EngineInfo = { name: 'nsfwjs', model: NSFW_MODEL_NAME, version: await packageVersion('nsfwjs') };
  return {
    engine,
    loadMs: performance.now() - started,
    async classify(image) {
      if (image.size !== NSFW_INPUT_SIZE || image.data.length !== NSFW_INPUT_SIZE * NSFW_INPUT_SIZE * 3) {
        throw new RangeError(`the NSFW model takes ${NSFW_INPUT_SIZE}x${NSFW_INPUT_SIZE} RGB input`);
      }
      const input = new Float32Array(image.data.length);
      for (let i = 0; i < input.length; i++) input[i] = image.data[i]! / 255;
      const output = tf.tidy(() => {
        const y = model.predict(tf.tensor4d(input, [1, NSFW_INPUT_SIZE, NSFW_INPUT_SIZE, 3]));
        return Array.isArray(y) ? y[0]! : y;
      });
      try {
        return classesFromOutput(await output.data());
      } finally {
        output.dispose();
      }
    },
  };
}

const PARTS = [
  'nsfwjs/models/mobilenet_v2',
  '@tensorflow/tfjs-core',
  '@tensorflow/tfjs-layers',
  '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm',
];

/** The npm packages the model needs that cannot be found (empty when all are installed); loads nothing. */
export function missingNsfwPackages(): string[] {
  return PARTS.filter((p) => {
    try {
      require.resolve(p);
      return false;
    } catch {
      return true;
    }
  });
}

/** The warm model; the first call loads it (about 0.5–1 s), later calls share it. */
export function nsfwModel(): Promise<NsfwModel> {
  loading ??= load().catch((err: unknown) => {
    loading = null; // a failed load may be retried
    throw err;
  });
  return loading;
}
