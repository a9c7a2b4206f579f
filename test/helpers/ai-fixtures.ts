// Fixtures for the AI engine tests, generated at test time and cached under
// <repo>/.test-cache/ai-fixtures (the file name carries a hash of its recipe): speech spoken by
// flite, speech muxed into a video, silence, a video without audio, and a multi-scene video whose
// scenes open with title cards drawn by FFmpeg drawtext.
import { createHash, randomBytes } from 'node:crypto';
import { ROOT } from './paths.js';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { mediaBinaries, runProcess } from '../../src/media/process-runner.js';

export const AI_FIXTURE_DIR = resolve(ROOT, '.test-cache/ai-fixtures');

/** Debian fonts-dejavu-core. */
export const TITLE_FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';

const pending = new Map<string, Promise<string>>();

async function cached(name: string, ext: string, key: string, make: (out: string) => Promise<void>): Promise<string> {
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
  const path = join(AI_FIXTURE_DIR, `${name}-${hash}.${ext}`);
  let job = pending.get(path);
  if (!job) {
    job = (async () => {
      if (((await stat(path).catch(() => null))?.size ?? 0) > 0) return path;
      await mkdir(AI_FIXTURE_DIR, { recursive: true });
      const tmp = join(AI_FIXTURE_DIR, `${name}-${hash}.tmp-${process.pid}-${randomBytes(4).toString('hex')}.${ext}`);
      try {
        await make(tmp);
        await rename(tmp, path);
      } finally {
        await rm(tmp, { force: true });
      }
      return path;
    })();
    pending.set(path, job);
    job.catch(() => pending.delete(path));
  }
  return job;
}

async function ffmpeg(args: string[]): Promise<void> {
  await runProcess(mediaBinaries().ffmpeg, ['-hide_banner', '-nostdin', '-v', 'error', '-y', ...args], {
    timeoutMs: 300_000,
  });
}

/** `text` spoken by flite's slt voice (16 kHz mono WAV, as flite writes it). */
export function spokenWav(text: string): Promise<string> {
  return cached(
    'flite',
    'wav',
    `slt ${text}`,
    async (out) => void (await runProcess('flite', ['-voice', 'slt', '-t', text, '-o', out], { timeoutMs: 120_000 })),
  );
}

/** Sentences spoken one after another with `pauseSeconds` of silence between them, as 16 kHz mono WAV. */
export function spokenParagraph(sentences: readonly string[], pauseSeconds = 1): Promise<string> {
  return cached('paragraph', 'wav', `${pauseSeconds} ${sentences.join('|')}`, async (out) => {
    const parts = await Promise.all(sentences.map((s) => spokenWav(s)));
    const inputs = parts.flatMap((p) => ['-i', p]);
    const n = parts.length;
    // Each sentence followed by silence (apad), then all concatenated.
    const pads = parts.map((_, i) => `[${i}:a]aresample=16000,apad=pad_dur=${pauseSeconds}[p${i}]`).join(';');
    const concat = `${parts.map((_, i) => `[p${i}]`).join('')}concat=n=${n}:v=0:a=1[out]`;
    await ffmpeg([
      ...inputs,
      '-filter_complex',
      `${pads};${concat}`,
      '-map',
      '[out]',
      '-ac',
      '1',
      '-ar',
      '16000',
      '-c:a',
      'pcm_s16le',
      out,
    ]);
  });
}

/** A WAV muxed under a testsrc2 picture as H.264 + AAC MP4 (the speech test's video input). */
export function speechVideo(wav: string, key: string): Promise<string> {
  return cached('speech-video', 'mp4', `${key} testsrc2 320x240 aac`, async (out) => {
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=320x240:rate=25',
      '-i',
      wav,
      '-shortest',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '96k',
      '-movflags',
      '+faststart',
      out,
    ]);
  });
}

export function silenceWav(seconds: number): Promise<string> {
  return cached('silence', 'wav', `anullsrc 16000 ${seconds}`, (out) =>
    ffmpeg(['-f', 'lavfi', '-i', `anullsrc=r=16000:cl=mono`, '-t', String(seconds), '-c:a', 'pcm_s16le', out]),
  );
}

export function videoWithoutAudio(seconds = 2): Promise<string> {
  return cached('noaudio', 'mp4', `testsrc2 ${seconds}`, (out) =>
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=320x240:rate=25:duration=${seconds}`,
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-pix_fmt',
      'yuv420p',
      out,
    ]),
  );
}

export interface Scene {
  title: string;
  /** A lavfi video source for the scene's content (without size/rate/duration). */
  source: string;
}

export interface SceneVideo {
  path: string;
  /** Where each scene (its title card) starts, and where each card gives way to content. */
  sceneStarts: number[];
  contentStarts: number[];
  duration: number;
}

/** Scenes of `cardSeconds` title card (white text on dark blue) + `contentSeconds` content, concatenated. */
export async function sceneVideo(scenes: readonly Scene[], cardSeconds = 2, contentSeconds = 6): Promise<SceneVideo> {
  const size = '640x360';
  const sceneSeconds = cardSeconds + contentSeconds;
  const inputs = scenes.flatMap((s) => [
    '-f',
    'lavfi',
    '-i',
    `color=c=0x1c2a5a:s=${size}:r=25:d=${cardSeconds},drawtext=fontfile=${TITLE_FONT}:text='${s.title}':fontsize=44:fontcolor=white:x=(w-tw)/2:y=(h-th)/2`,
    // -t as an input option: not every lavfi source has a duration option (mandelbrot has none).
    '-f',
    'lavfi',
    '-t',
    String(contentSeconds),
    '-i',
    `${s.source}=size=${size}:rate=25`,
  ]);
  const n = scenes.length * 2;
  const filter = `${Array.from({ length: n }, (_, i) => `[${i}:v]setsar=1[v${i}]`).join(';')};${Array.from({ length: n }, (_, i) => `[v${i}]`).join('')}concat=n=${n}:v=1:a=0,format=yuv420p[out]`;
  const path = await cached('scenes', 'mp4', `${cardSeconds} ${contentSeconds} ${JSON.stringify(scenes)}`, (out) =>
    ffmpeg([
      ...inputs,
      '-filter_complex',
      filter,
      '-map',
      '[out]',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-g',
      '50',
      out,
    ]),
  );
  return {
    path,
    sceneStarts: scenes.map((_, i) => i * sceneSeconds),
    contentStarts: scenes.map((_, i) => i * sceneSeconds + cardSeconds),
    duration: scenes.length * sceneSeconds,
  };
}

/** `wav` played `times` times in a row (a long input for progress and cancellation), 16 kHz mono WAV. */
export function loopedWav(wav: string, times: number): Promise<string> {
  return cached('looped', 'wav', `${wav} x${times}`, (out) =>
    ffmpeg(['-stream_loop', String(times - 1), '-i', wav, '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', out]),
  );
}
