// Whisper-style servers answer `language` with an English name ("english"); the speech output
// uses ISO 639-1. Names from Whisper's language table (the set OpenAI's API and most
// OpenAI-compatible servers report); two-letter codes pass through.
const NAMES: Readonly<Record<string, string>> = {
  afrikaans: 'af', albanian: 'sq', amharic: 'am', arabic: 'ar', armenian: 'hy', assamese: 'as', azerbaijani: 'az',
  bashkir: 'ba', basque: 'eu', belarusian: 'be', bengali: 'bn', bosnian: 'bs', breton: 'br', bulgarian: 'bg',
  burmese: 'my', cantonese: 'yue', castilian: 'es', catalan: 'ca', chinese: 'zh', croatian: 'hr', czech: 'cs',
  danish: 'da', dutch: 'nl', english: 'en', estonian: 'et', faroese: 'fo', finnish: 'fi', flemish: 'nl', french: 'fr',
  galician: 'gl', georgian: 'ka', german: 'de', greek: 'el', gujarati: 'gu', haitian: 'ht', 'haitian creole': 'ht',
  hausa: 'ha', hawaiian: 'haw', hebrew: 'he', hindi: 'hi', hungarian: 'hu', icelandic: 'is', indonesian: 'id',
  italian: 'it', japanese: 'ja', javanese: 'jw', kannada: 'kn', kazakh: 'kk', khmer: 'km', korean: 'ko', lao: 'lo',
  latin: 'la', latvian: 'lv', letzeburgesch: 'lb', lingala: 'ln', lithuanian: 'lt', luxembourgish: 'lb',
  macedonian: 'mk', malagasy: 'mg', malay: 'ms', malayalam: 'ml', maltese: 'mt', maori: 'mi', marathi: 'mr',
  moldavian: 'ro', moldovan: 'ro', mongolian: 'mn', myanmar: 'my', nepali: 'ne', norwegian: 'no', nynorsk: 'nn',
  occitan: 'oc', panjabi: 'pa', pashto: 'ps', persian: 'fa', polish: 'pl', portuguese: 'pt', punjabi: 'pa',
  pushto: 'ps', romanian: 'ro', russian: 'ru', sanskrit: 'sa', serbian: 'sr', shona: 'sn', sindhi: 'sd', sinhala: 'si',
  sinhalese: 'si', slovak: 'sk', slovenian: 'sl', somali: 'so', spanish: 'es', sundanese: 'su', swahili: 'sw',
  swedish: 'sv', tagalog: 'tl', tajik: 'tg', tamil: 'ta', tatar: 'tt', telugu: 'te', thai: 'th', tibetan: 'bo',
  turkish: 'tr', turkmen: 'tk', ukrainian: 'uk', urdu: 'ur', uzbek: 'uz', valencian: 'ca', vietnamese: 'vi',
  welsh: 'cy', yiddish: 'yi', yoruba: 'yo',
};

/** "english" / "English" / "en" / "en-US" → "en"; unknown → null. */
export function languageCode(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  if (/^[a-z]{2,3}([-_][a-z0-9]+)?$/.test(v) && !(v in NAMES)) return v.split(/[-_]/)[0]!;
  return NAMES[v] ?? null;
}
