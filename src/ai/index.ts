// Public API of the intelligence engines: the task kinds import from here only.
// No server imports: media (ffmpeg, sharp, tools) below, the outbound client injected.
export type { EngineInfo } from './engine.js';
export {
  EngineUnavailableError,
  isEngineUnavailableError,
  isProviderError,
  ProviderError,
  redactSecret,
} from './errors.js';
export { progressReporter, subProgress, type ProgressFn, type ProgressReporter } from './progress.js';

// speech
export type { SpeechResult, SpeechSegment, SpeechWord } from './speech/types.js';
export {
  DEFAULT_LOCAL_CHUNK_SECONDS,
  localSpeechEngine,
  transcribeLocal,
  type LocalSpeechOptions,
} from './speech/local.js';
export { transcribeWithProvider, type ProviderSpeechOptions } from './speech/provider.js';
export type { SpeechInputOptions } from './speech/prepare.js';
export { speechIntelligence, type SpeechIntelligence, type SpeechTimelineEntry } from './speech/json.js';
export { groupWords, type SegmentOptions } from './speech/segments.js';
export { languageCode } from './speech/languages.js';

// subtitles
export { CUE_DEFAULTS, cuesFromWords, wrapLines, type Cue, type CueOptions, type TimedWord } from './subtitles/cues.js';
export {
  formatTimestamp,
  SUBTITLE_MIME,
  toSrt,
  toVtt,
  writeSubtitles,
  type SubtitleFormat,
} from './subtitles/format.js';
export { parseSubtitles, parseTimestamp, type ParsedSubtitles, type SubtitleRules } from './subtitles/validate.js';

// vision
export { ocrImage, ocrLines, type OcrLine, type OcrOptions, type OcrResult } from './vision/ocr.js';
export { findSceneCuts, mergeCloseCuts, type SceneOptions } from './vision/scenes.js';
export { grabKeyframes, type Keyframe } from './vision/keyframes.js';
export { evenTimes, imageUrl, videoFrameUrls, type FrameImage } from './vision/frames.js';

// chapters
export { planChapters, speechPauses, type ChapterPlanInput, type ChapterSpan, type TimeSpan } from './chapters/plan.js';
export { chapterTitle, titleFromOcr, titleFromSpeech, type TitleSource } from './chapters/titles.js';
export { chaptersJson, chaptersVtt, type Chapter } from './chapters/format.js';
export { detectChapters, titleCardTime, type ChapterDetectOptions, type DetectedChapter } from './chapters/detect.js';

// nsfw
export { nsfwImage, nsfwVideo, type NsfwOptions, type NsfwResult, type NsfwVideoOptions } from './nsfw/detect.js';
export { nsfwModel, nsfwModelLoads, NSFW_INPUT_SIZE, NSFW_MODEL_NAME, type NsfwModel } from './nsfw/model.js';
export {
  classesFromOutput,
  flaggedSpans,
  scoresFromClasses,
  verdict,
  type FlaggedSpan,
  type NsfwClasses,
  type NsfwScores,
} from './nsfw/scores.js';
export { LOCAL_NOT_SCORED, nsfwIntelligence, type NsfwIntelligence } from './nsfw/json.js';

// providers
export {
  endpointUrl,
  parseRetryAfter,
  providerRequest,
  type OutboundRequest,
  type ProviderBody,
  type ProviderEndpoint,
} from './provider/client.js';
export {
  chatBody,
  chatStructured,
  schemaProblems,
  structuredOutput,
  type ChatMessage,
  type ChatRequest,
  type ChatResult,
  type ContentPart,
  type StructuredOutput,
} from './provider/chat.js';
export { listModels } from './provider/models.js';

// prompts for the language-model kinds
export { describeMedia, mediaParts, transcriptText, type MediaContext } from './prompts/context.js';
export {
  DESCRIPTION_OUTPUT,
  descriptionIntelligence,
  descriptionMessages,
  type DescriptionAnswer,
} from './prompts/description.js';
export {
  normalizeOutline,
  OUTLINE_OUTPUT,
  outlineIntelligence,
  outlineMessages,
  type OutlineAnswer,
  type OutlineEntry,
} from './prompts/outline.js';
export {
  applyChapterTitles,
  CHAPTER_TITLES_OUTPUT,
  chapterTitleMessages,
  type ChapterForTitling,
  type ChapterTitlesAnswer,
} from './prompts/chapter-titles.js';
export {
  PROMPT_OUTPUT,
  promptIntelligence,
  promptMessages,
  promptOutput,
  promptSchemaProblems,
  type PromptAnswer,
} from './prompts/prompt.js';

// status
export {
  nsfwEngineStatus,
  ocrEngineStatus,
  providerStatus,
  sceneEngineStatus,
  speechEngineStatus,
  type EngineStatus,
  type ProviderStatus,
} from './status.js';
