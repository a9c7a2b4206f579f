import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mediaBinaries, probeFile, readMp4Facts, runProcess } from '../../src/media/index.js';
import { fixture } from '../helpers/fixtures.js';

// The in-process reader must say what ffprobe says about the files mediad's FFmpeg writes, field
// for field, or nothing (null: the transcode then asks ffprobe).
const LIMITS = { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER };
const ffprobeSays = (file: string) => probeFile(file, LIMITS, { verifyDuration: false });

describe('readMp4Facts', () => {
  let dir: string;
  let src: string;
  const make = async (name: string, args: string[]) => {
    const out = join(dir, name);
    await runProcess(
      mediaBinaries().ffmpeg,
      ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-i', src, ...args, out],
      {
        timeoutMs: 120_000,
      },
    );
    return out;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediad-mp4-facts-'));
    src = await fixture('video-mov');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const outputs: [string, string, string[]][] = [
    [
      'H.264 + AAC in MP4',
      'a.mp4',
      [
        '-vf',
        'scale=-2:120',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-c:a',
        'aac',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ],
    ],
    [
      'H.264 without audio',
      'b.mp4',
      ['-an', '-c:v', 'libx264', '-preset', 'ultrafast', '-movflags', '+faststart', '-f', 'mp4'],
    ],
    [
      'MOV at 29.97 fps',
      'c.mov',
      [
        '-r',
        '30000/1001',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-c:a',
        'aac',
        '-movflags',
        '+faststart',
        '-f',
        'mov',
      ],
    ],
    [
      'H.265 tagged hvc1',
      'd.mp4',
      [
        '-t',
        '1',
        '-c:v',
        'libx265',
        '-preset',
        'ultrafast',
        '-tag:v',
        'hvc1',
        '-an',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ],
    ],
    ['AAC audio alone (M4A)', 'e.m4a', ['-vn', '-c:a', 'aac', '-movflags', '+faststart', '-f', 'mp4']],
    [
      'moov after mdat (no faststart)',
      'f.mp4',
      ['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-f', 'mp4'],
    ],
  ];
  for (const [what, name, args] of outputs) {
    it(`gives ffprobe's facts: ${what}`, async () => {
      const file = await make(name, args);
      const mine = await readMp4Facts(file);
      assert.ok(mine, 'a file FFmpeg wrote is read');
      assert.deepEqual(mine, await ffprobeSays(file));
    });
  }

  it('leaves a rotated video to ffprobe (its display size is swapped)', async () => {
    const file = await make('r.mp4', ['-c', 'copy', '-metadata:s:v:0', 'rotate=90', '-f', 'mp4']);
    assert.equal(await readMp4Facts(file), null);
    assert.equal((await ffprobeSays(file)).width, 240);
  });

  it('answers null for what is not an MP4 (WebM, a truncated header, garbage)', async () => {
    const webm = await make('w.webm', [
      '-t',
      '0.5',
      '-c:v',
      'libvpx-vp9',
      '-deadline',
      'realtime',
      '-an',
      '-f',
      'webm',
    ]);
    assert.equal(await readMp4Facts(webm), null);
    const cut = join(dir, 'cut.mp4');
    const whole = await make('whole.mp4', ['-c', 'copy', '-movflags', '+faststart', '-f', 'mp4']);
    await writeFile(cut, (await readFile(whole)).subarray(0, 200));
    assert.equal(await readMp4Facts(cut), null);
    const junk = join(dir, 'junk.mp4');
    await writeFile(junk, Buffer.from('\x00\x00\x00\x10ftypisom\xff\xff\xff\xffmoov', 'latin1'));
    assert.equal(await readMp4Facts(junk), null);
  });
});
