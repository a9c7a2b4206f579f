#!/usr/bin/env node
// Makes sure the system packages mediad uses are on this machine before it starts or tests run.
// On Debian/Ubuntu as root it installs what is missing with apt (one update, one install);
// anywhere else it says what to install.
//   FFmpeg (ffmpeg, ffprobe)              required: mediad does not start without it
//   pocketsphinx, pocketsphinx-en-us      offline speech-to-text (speech, subtitles, chapters)
//   tesseract-ocr, tesseract-ocr-eng      OCR of title cards (chapters)
//   with --test: flite, espeak-ng         speech the tests synthesise
//                fonts-dejavu-core        the font of the tests' drawn title cards
//                chromium                 the browser tests (/docs, the web application)
//                libnss3-tools            certutil: the first-hour test trusts the CA as the README says
// Missing optional packages are a warning: mediad runs, the kinds that need them fail with a
// message naming the package.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const forTests = process.argv.includes('--test');
const ffmpegPath = process.env.MEDIAD_FFMPEG_PATH || 'ffmpeg';
const ffprobePath = process.env.MEDIAD_FFPROBE_PATH || 'ffprobe';

/** Whether a command can be started at all (its exit code does not matter). */
const runs = (cmd, args = []) => !spawnSync(cmd, args, { stdio: 'ignore' }).error;
const runsOk = (cmd, args) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const tesseractHas = (lang) => {
  const res = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' });
  return !res.error && `${res.stdout}\n${res.stderr}`.split('\n').some((l) => l.trim() === lang);
};

const PACKAGES = [
  {
    name: 'ffmpeg',
    required: true,
    present: () => runsOk(ffmpegPath, ['-version']) && runsOk(ffprobePath, ['-version']),
  },
  { name: 'pocketsphinx', present: () => runs('pocketsphinx_continuous', ['-help', 'yes']) },
  { name: 'pocketsphinx-en-us', present: () => existsSync('/usr/share/pocketsphinx/model/en-us/en-us.lm.bin') },
  { name: 'tesseract-ocr', present: () => runsOk('tesseract', ['--version']) },
  { name: 'tesseract-ocr-eng', present: () => tesseractHas('eng') },
  ...(forTests
    ? [
        { name: 'flite', present: () => runs('flite', ['--version']) },
        { name: 'espeak-ng', present: () => runsOk('espeak-ng', ['--version']) },
        {
          name: 'fonts-dejavu-core',
          present: () => existsSync('/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf'),
        },
        { name: 'chromium', present: () => existsSync('/usr/bin/chromium') },
        { name: 'libnss3-tools', present: () => runs('certutil', ['-H']) },
      ]
    : []),
];

const missing = () => PACKAGES.filter((p) => !p.present());

let absent = missing();
if (absent.length === 0) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = runs('apt-get', ['--version']);
if (isRoot && hasApt) {
  const names = absent.map((p) => p.name);
  console.log(`mediad: installing ${names.join(' ')} with apt-get (about a minute)...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...names], { stdio: 'inherit', env });
  } catch {
    // reported below with the manual instructions
  }
  absent = missing();
  if (absent.length === 0) {
    console.log('mediad: system packages installed.');
    process.exit(0);
  }
}

const names = absent.map((p) => p.name).join(' ');
const how = hasApt
  ? `  sudo apt-get install -y ${names}`
  : `  Debian/Ubuntu: sudo apt-get install -y ${names}
  Fedora:        sudo dnf install -y ${absent.map((p) => ({ ffmpeg: 'ffmpeg', pocketsphinx: 'pocketsphinx', 'tesseract-ocr': 'tesseract', 'tesseract-ocr-eng': 'tesseract-langpack-eng', flite: 'flite', 'espeak-ng': 'espeak-ng', 'fonts-dejavu-core': 'dejavu-sans-fonts' })[p.name] ?? p.name).join(' ')}
  macOS:         brew install ${absent
    .map(
      (p) =>
        ({
          'tesseract-ocr': 'tesseract',
          'tesseract-ocr-eng': 'tesseract',
          'pocketsphinx-en-us': 'cmu-pocketsphinx',
          pocketsphinx: 'cmu-pocketsphinx',
          'fonts-dejavu-core': 'font-dejavu',
        })[p.name] ?? p.name,
    )
    .filter((v, i, a) => a.indexOf(v) === i)
    .join(' ')}`;

if (absent.some((p) => p.required)) {
  console.error(`mediad needs FFmpeg and ffprobe, and they could not be found or run (${ffmpegPath}, ${ffprobePath}).
Install the missing packages, then run the command again:
${how}
Or point MEDIAD_FFMPEG_PATH and MEDIAD_FFPROBE_PATH at the binaries.`);
  process.exit(1);
}

const optional = absent.map((p) => p.name);
const testOnly = ['flite', 'espeak-ng', 'fonts-dejavu-core'];
console.warn(`mediad: these packages are missing: ${optional.join(', ')}.
${optional.some((n) => !testOnly.includes(n)) ? 'mediad starts without them, but the speech, subtitles and chapters kinds need pocketsphinx and tesseract.\n' : ''}${optional.some((n) => testOnly.includes(n)) ? 'The AI engine tests (test/ai) need flite, espeak-ng and fonts-dejavu-core and fail without them.\n' : ''}Install them with:
${how}`);
process.exit(0);
