// Which engine produced a result: stored with every intelligence output.
export interface EngineInfo {
  /** e.g. "pocketsphinx", "tesseract", "nsfwjs", "openai-compatible". */
  name: string;
  /** e.g. "en-us", "MobileNetV2", or the provider's model name. */
  model: string;
  /** Engine or package version when known. */
  version: string | null;
}
