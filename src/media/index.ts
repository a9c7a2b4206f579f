// Public API of the media layer: the rest of mediad imports from here only.
export { averageColor, type AverageColorOptions } from './average-color.js';
export { ffprobeArgs, formatSeconds, frameGrabArgs, packetScanArgs, TAIL_PACKETS } from './ffprobe-args.js';
export { DEMUXER_WHITELIST, ffmpegPreamble, fileUrl, inputHardeningArgs } from './ffmpeg-preamble.js';
export {
  containerFormat,
  DEFAULT_MAX_FRAMES,
  formatDuration,
  formatMegapixels,
  frameLimitError,
  imageFormat,
  LIMIT_SETTINGS,
  UNSUPPORTED_MESSAGE,
  type ContainerFacts,
  type FormatInfo,
  type MediaKind,
} from './formats.js';
export { probeFile, type ProbeLimits, type ProbeOptions, type ProbeResult } from './probe.js';
export { readMp4Facts } from './mp4-facts.js';
export {
  CAP_TOLERANCE_SECONDS,
  cappedLengthArgs,
  checkFrameTime,
  checkOutputCap,
  inputLimitArgs,
  outputCap,
  type DurationLimit,
} from './duration-cap.js';
export {
  chooseDuration,
  DECLARED_SLACK_SECONDS,
  latestEnd,
  measureDuration,
  packetTime,
  parseCompactLine,
  type MeasuredDuration,
  type PacketTime,
} from './probe-duration.js';
export {
  mediaBinaries,
  ProcessError,
  runProcess,
  setMediaBinaries,
  type MediaBinaries,
  type ProcessFailure,
  type RunOptions,
  type RunResult,
} from './process-runner.js';
export { setProcessingNice } from './processing-priority.js';
export {
  audioOutputFormat,
  buildAudioArgs,
  OPUS_LAYOUT_FILTER,
  sampleRateAllowed,
  type AudioFormat,
  type AudioOptions,
} from './audio-args.js';
export { failureLine, PROGRESS_INTERVAL_MS, ProgressParser, runFfmpeg, type FfmpegRunOptions } from './ffmpeg-run.js';
export {
  defaultFrameTime,
  grabVideoFrame,
  imageOutputFormat,
  parseBackground,
  transformImage,
  videoFrameArgs,
  type ImageFit,
  type ImageFormat,
  type ImageOptions,
  type ImageTransformContext,
  type ImageTransformResult,
} from './image-transform.js';
export {
  crfFor,
  DEFAULT_IMAGE_QUALITY,
  DEFAULT_VIDEO_QUALITY,
  QUALITY_LEVELS,
  qualityToNumber,
  type QualityLevel,
  type VideoCodec,
} from './quality.js';
export {
  buildStoryboard,
  DEFAULT_TILE_WIDTH,
  MAX_STORYBOARD_TILES,
  planStoryboard,
  storyboardArgs,
  storyboardTiles,
  storyboardVtt,
  vttTime,
  type StoryboardOptions,
  type StoryboardPlan,
  type StoryboardResult,
  type StoryboardTile,
} from './storyboard.js';
export { isMediaTransformError, MediaTransformError, type MediaTransformCode } from './transform-error.js';
export { expectedDuration, trimWindow, type TrimOptions, type TrimWindow } from './trim.js';
export {
  buildVideoArgs,
  codecAllowedIn,
  DEFAULT_PRESETS,
  defaultCodecFor,
  presetAllowed,
  VIDEO_PRESETS,
  videoFilters,
  videoOutputFormat,
  type Fit,
  POSITIONS,
  type Position,
  type VideoFormat,
  type VideoOptions,
} from './video-args.js';
export {
  decodeSpeechPcm,
  encodePcmSlice,
  pcmOffset,
  readPcm,
  slicePcm,
  SPEECH_BYTES_PER_SECOND,
  SPEECH_SAMPLE_RATE,
  speechPcmArgs,
  wavHeader,
  type SpeechPcmOptions,
  type SpeechUploadFormat,
} from './speech-audio.js';
export {
  DEFAULT_POCKETSPHINX_MODEL,
  missingModelFiles,
  parsePocketsphinxLine,
  pocketsphinxArgs,
  runPocketsphinx,
  type PocketsphinxModel,
  type PocketsphinxRunOptions,
  type PocketsphinxWord,
} from './pocketsphinx.js';
export {
  DEFAULT_TESSERACT_BINARY,
  parseTesseractTsv,
  runTesseract,
  tesseractArgs,
  type OcrWord,
  type TesseractOptions,
} from './tesseract.js';
export {
  detectSceneCuts,
  parseScdetLine,
  sceneDetectArgs,
  type SceneCut,
  type SceneDetectOptions,
} from './scene-detect.js';
export {
  imageDataUrl,
  imageToRgb,
  videoRgbFrames,
  videoRgbFramesArgs,
  type RgbImage,
  type VideoFrameSample,
} from './model-input.js';
export { debianPackageVersion, ffmpegHasFilter, runTool, toolVersion, type ToolRun } from './tool-info.js';
// adaptive streaming (adaptive_video)
export { ffmpegHasEncoder } from './tool-info.js';
export * from './adaptive-args.js';
export * from './hls-playlists.js';
// On-the-fly image URLs (issue 24).
export {
  animatedPageAt,
  IMAGE_URL_POSITIONS,
  renderImageUrl,
  type ImageUrlPositionName,
  type ImageUrlRender,
  type ImageUrlResult,
} from './image-url-render.js';
