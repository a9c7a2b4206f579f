#!/usr/bin/env node
// Makes sure FFmpeg and ffprobe are on this machine before mediad starts or tests run.
// On Debian/Ubuntu as root it installs them with apt; anywhere else it says how.
import { execFileSync, spawnSync } from 'node:child_process';

const tools = [process.env.MEDIAD_FFMPEG_PATH || 'ffmpeg', process.env.MEDIAD_FFPROBE_PATH || 'ffprobe'];
const missing = () => tools.filter((t) => spawnSync(t, ['-version'], { stdio: 'ignore' }).status !== 0);

let absent = missing();
if (absent.length === 0) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
if (isRoot && hasApt) {
  console.log(`mediad: ${absent.join(' and ')} not found; installing FFmpeg with apt-get (about a minute)...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', 'ffmpeg'], { stdio: 'inherit', env });
  } catch {
    // reported below with the manual instructions
  }
  absent = missing();
  if (absent.length === 0) {
    console.log('mediad: FFmpeg installed.');
    process.exit(0);
  }
}

console.error(`mediad needs FFmpeg and ffprobe, and ${absent.join(' and ')} could not be found or run.
Install FFmpeg, then run the command again:
  Debian/Ubuntu:  sudo apt-get install -y ffmpeg
  Fedora:         sudo dnf install -y ffmpeg
  macOS:          brew install ffmpeg
Or point MEDIAD_FFMPEG_PATH and MEDIAD_FFPROBE_PATH at the binaries.`);
process.exit(1);
