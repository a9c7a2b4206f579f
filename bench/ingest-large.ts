// POST /files {url} of a ~1 GB WAV from a loopback origin, against curl fetching the same URL in
// the same run: throughput, where the server's time goes, and its RSS growth. Every timed run
// (curl or mediad) starts after settle(), so page-cache memory is in the same state for each.
// Run: npm run bench:ingest  (add --profile for a CPU profile of mediad).
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { open, readdir, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { probeFile } from '../src/media/index.js';
import { fixture, largeWav } from '../test/helpers/fixtures.js';
import {
  createKeyCli,
  fmt,
  freePort,
  mb,
  median,
  mediadEnv,
  removeDir,
  request,
  rssBytes,
  sleep,
  startMediad,
  startRole,
  summarizeProfile,
  table,
  tempDataDir,
  verdict,
  writeResults,
} from './lib.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(import.meta.url);
const TARGET_RATIO = 0.8;
const TARGET_RSS_MB = 64;
const RUNS = 3;
const SAMPLE_MS = 20;

/** The origin: /warm-up.wav answers the small file, any other path the large one; 1 MiB reads, Content-Length set. */
async function origin(large: string, small: string): Promise<void> {
  const sizes = { [large]: (await stat(large)).size, [small]: (await stat(small)).size };
  const server = http.createServer((req, res) => {
    const file = req.url === '/warm-up.wav' ? small : large;
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': sizes[file] });
    createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(res);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${(server.address() as { port: number }).port}\n`));
  process.once('SIGTERM', () => process.exit(0));
}

/**
 * Puts page-cache memory in the same state before every timed run. This VM hands memory that
 * stays free for a few seconds back to its host, and touching it again is slow (measured: a
 * 1 GB write right after deleting a 1 GB file 0.25 s, five seconds later 2.1 s). So write and
 * delete a scratch file of the download's size, then flush, just before each run.
 */
async function settle(dir: string, bytes: number): Promise<void> {
  const scratch = path.join(dir, 'settle.bin');
  const fh = await open(scratch, 'w');
  const block = Buffer.alloc(16 * 1024 * 1024, 1);
  for (let n = 0; n < bytes; n += block.length) await fh.write(block);
  await fh.close();
  await rm(scratch);
  await run('sync');
  await sleep(200);
}

/**
 * Node's own ceiling: a fresh node process fetching the URL with undici (mediad's HTTP client)
 * and dropping every chunk, timed from the request to the last byte. mediad cannot receive
 * faster than this, whatever it does with the bytes.
 */
async function discard(url: string): Promise<void> {
  const { request: get } = await import('undici');
  const t = performance.now();
  const res = await get(url, { highWaterMark: 1024 * 1024 });
  let bytes = 0;
  for await (const chunk of res.body) bytes += (chunk as Buffer).length;
  process.stdout.write(`${bytes} ${(performance.now() - t) / 1000}\n`);
}

/** "<bytes> <seconds>", as curl -w and discard() print them. */
function bytesAndSeconds(stdout: string): { bytes: number; seconds: number } {
  const [bytes, seconds] = stdout.trim().split(' ').map(Number);
  return { bytes: bytes!, seconds: seconds! };
}

async function nodeDiscard(url: string): Promise<{ bytes: number; seconds: number }> {
  return bytesAndSeconds((await run(process.execPath, ['--import', 'tsx', SCRIPT, '--child', 'discard', url])).stdout);
}

async function curl(url: string, out: string): Promise<{ bytes: number; seconds: number }> {
  return bytesAndSeconds((await run('curl', ['-s', '-o', out, '-w', '%{size_download} %{time_total}', url])).stdout);
}

async function fsyncFile(file: string): Promise<void> {
  const fh = await open(file, 'r');
  await fh.sync();
  await fh.close();
}

interface IngestRun {
  body: Record<string, string>;
  seconds: number;
  downloadS: number | null;
  storeS: number | null;
  commitS: number | null;
  rssBaseMB: number;
  rssPeakMB: number;
  id: string;
}

/** One POST /files timed to its 201, sampling RSS and the scratch file every SAMPLE_MS. */
async function ingest(
  base: string,
  ca: Buffer,
  key: string,
  pid: number,
  scratch: string,
  size: number,
  body: Record<string, string>,
): Promise<IngestRun> {
  const base0: number[] = [];
  for (let i = 0; i < 5; i++, await sleep(SAMPLE_MS)) base0.push((await rssBytes(pid)) ?? 0);
  const rssBase = median(base0);
  let peak = rssBase;
  let seen = false;
  let downloaded: number | null = null;
  let renamed: number | null = null;
  const t0 = performance.now();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      peak = Math.max(peak, (await rssBytes(pid)) ?? 0);
      const name = (await readdir(scratch).catch(() => [])).find((n) => n.startsWith('ingest-'));
      const st = name ? await stat(path.join(scratch, name)).catch(() => null) : null;
      const now = performance.now() - t0;
      if (st) seen = true;
      if (st && downloaded === null && st.size >= size) downloaded = now;
      if (!st && seen && renamed === null) renamed = now; // moved into the blob store
    })().finally(() => (busy = false));
  }, SAMPLE_MS);
  const reply = await request(`${base}/files`, {
    method: 'POST',
    ca,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const total = performance.now() - t0;
  clearInterval(timer);
  if (seen && renamed === null) renamed = total; // renamed within the last sample period before the reply
  peak = Math.max(peak, (await rssBytes(pid)) ?? 0);
  if (reply.status !== 201) throw new Error(`POST /files answered ${reply.status}: ${reply.body.slice(0, 500)}`);
  const file = (JSON.parse(reply.body) as { data: { id: string; filesize: number } }).data;
  if (file.filesize !== size) throw new Error(`stored ${file.filesize} bytes, expected ${size}`);
  const s = (ms: number | null) => (ms === null ? null : ms / 1000);
  return {
    body,
    id: file.id,
    seconds: total / 1000,
    downloadS: s(downloaded),
    storeS: downloaded !== null && renamed !== null ? s(renamed - downloaded) : null,
    commitS: renamed !== null ? s(total - renamed) : null,
    rssBaseMB: rssBase / 2 ** 20,
    rssPeakMB: peak / 2 ** 20,
  };
}

async function main(): Promise<void> {
  const profile = process.argv.includes('--profile');
  const wav = await largeWav(1024 ** 3);
  const size = (await stat(wav)).size;
  console.log(`source: ${wav} (${fmt(mb(size), 0)} MB)`);
  const dataDir = await tempDataDir('ingest');
  const children: { stop(): Promise<void> }[] = [];
  try {
    const small = await fixture('audio-wav');
    const src = await startRole(SCRIPT, 'origin', [wav, small]);
    children.push(src);
    const host = `127.0.0.1:${src.port}`;
    const url = (name: string) => `http://${host}/${name}`;

    // Clients that drop the bytes, each run checked to have received the whole file.
    const droppingRuns = async (client: string, fetchOnce: () => Promise<{ bytes: number; seconds: number }>) => {
      const seconds: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        await settle(dataDir, size);
        const r = await fetchOnce();
        if (r.bytes !== size) throw new Error(`${client} got ${r.bytes} bytes`);
        seconds.push(r.seconds);
      }
      return seconds;
    };
    const curlNull = await droppingRuns('curl', () => curl(url('a.wav'), '/dev/null'));
    const nodeNull = await droppingRuns('node', () => nodeDiscard(url('a.wav')));
    const curlFile: number[] = [];
    const curlDisk: number[] = [];
    const diskOut = path.join(dataDir, 'curl-out.wav');
    // References only: what storing the bytes costs, curl writing a file on the data dir's
    // filesystem (page cache only), then the same with the fsync that makes it durable.
    for (let i = 0; i < RUNS; i++) {
      await settle(dataDir, size);
      curlFile.push((await curl(url('a.wav'), diskOut)).seconds);
      await rm(diskOut);
    }
    for (let i = 0; i < RUNS; i++) {
      await settle(dataDir, size);
      const t = performance.now();
      await curl(url('a.wav'), diskOut);
      await fsyncFile(diskOut);
      curlDisk.push((performance.now() - t) / 1000);
      await rm(diskOut);
    }
    const t = performance.now();
    await probeFile(wav, { maxPixels: 1e8, maxDurationSeconds: 86_400 });
    const probeS = (performance.now() - t) / 1000;

    const port = await freePort();
    const env = mediadEnv(dataDir, port, {
      MEDIAD_ALLOWED_URL_HOSTS: host,
      MEDIAD_MAX_FILE_BYTES: String(8 * 1024 ** 3),
      MEDIAD_MAX_DURATION_SECONDS: String(7 * 86_400),
    });
    const key = await createKeyCli(env);
    const profDir = path.join(dataDir, 'prof');
    const mediad = await startMediad(env, profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
    children.push(mediad);
    const scratch = path.join(dataDir, 'tmp', String(mediad.pid));
    const bodies: Record<string, string>[] = [
      { url: url('take-1.wav'), filename: 'bench-1.wav' },
      { url: url('take-2.wav'), filename: 'bench-2.wav', folder: 'bench' },
      { url: url('take-3.wav') },
    ];
    // One small ingest first, so one-time costs (lazy imports, JIT, first sharp/ffprobe use) are not counted as ingest memory.
    const warm = await ingest(mediad.url, mediad.ca, key.key, mediad.pid, scratch, (await stat(small)).size, {
      url: url('warm-up.wav'),
    });
    console.log(
      `warm-up POST /files (${fmt((await stat(small)).size / 1024, 0)} KiB): ${fmt(warm.seconds, 2)} s, RSS ${fmt(warm.rssBaseMB, 0)} -> ${fmt(warm.rssPeakMB, 0)} MB`,
    );
    const runs: IngestRun[] = [];
    for (const body of bodies) {
      await settle(dataDir, size);
      const r = await ingest(mediad.url, mediad.ca, key.key, mediad.pid, scratch, size, body);
      console.log(`POST /files ${JSON.stringify(body)}: ${fmt(r.seconds, 2)} s`);
      runs.push(r);
      // Each run stored a new 1 GB blob: remove it (disk space; the next settle() primes memory the same way for every run).
      const del = await request(`${mediad.url}/files/${r.id}`, {
        method: 'DELETE',
        ca: mediad.ca,
        headers: { authorization: `Bearer ${key.key}` },
      });
      if (del.status !== 200) throw new Error(`DELETE /files/${r.id} answered ${del.status}`);
    }
    let prof: Awaited<ReturnType<typeof summarizeProfile>> | null = null;
    if (profile) {
      await mediad.stop();
      prof = await summarizeProfile(profDir);
    }

    const mbps = (s: number) => mb(size) / s;
    const curlMBps = mbps(median(curlNull));
    const fileMBps = mbps(median(curlFile));
    const diskMBps = mbps(median(curlDisk));
    const nodeMBps = mbps(median(nodeNull));
    const mediadMBps = mbps(median(runs.map((r) => r.seconds)));
    const dlTimes = runs.map((r) => r.downloadS).filter((x): x is number => x !== null);
    const ratio = mediadMBps / curlMBps;
    const rssGrowth = Math.max(...runs.map((r) => r.rssPeakMB - r.rssBaseMB));
    const cell = (x: number | null) => (x === null ? '-' : fmt(x, 2));

    console.log(`\ningest of a ${fmt(mb(size), 0)} MB WAV over loopback HTTP (median of ${RUNS})\n`);
    console.log(
      table(
        ['client', 'MB/s', 'seconds (each run)'],
        [
          ['curl -o /dev/null', fmt(curlMBps, 0), curlNull.map((x) => fmt(x, 2)).join(' ')],
          ["node + undici, bytes dropped (Node's ceiling)", fmt(nodeMBps, 0), nodeNull.map((x) => fmt(x, 2)).join(' ')],
          ['curl -o file (reference)', fmt(fileMBps, 0), curlFile.map((x) => fmt(x, 2)).join(' ')],
          ['curl -o file + fsync (reference)', fmt(diskMBps, 0), curlDisk.map((x) => fmt(x, 2)).join(' ')],
          ['mediad POST /files -> 201', fmt(mediadMBps, 0), runs.map((r) => fmt(r.seconds, 2)).join(' ')],
          [
            'mediad download phase only',
            dlTimes.length ? fmt(mbps(median(dlTimes)), 0) : '-',
            dlTimes.map((x) => fmt(x, 2)).join(' '),
          ],
        ],
      ),
    );
    console.log('\nwhere mediad spends the time (seconds; sampled every 20 ms from its scratch file):\n');
    console.log(
      table(
        ['run', 'total', 'download', 'probe+fsync+rename', 'commit+reply', 'RSS base MB', 'RSS peak MB', 'growth MB'],
        runs.map((r, i) => [
          `${i + 1} ${r.body.filename ?? '(no filename)'}`,
          fmt(r.seconds, 2),
          cell(r.downloadS),
          cell(r.storeS),
          cell(r.commitS),
          fmt(r.rssBaseMB, 0),
          fmt(r.rssPeakMB, 0),
          fmt(r.rssPeakMB - r.rssBaseMB, 1),
        ]),
      ),
    );
    console.log(`(ffprobe of the cached source alone, in this process: ${fmt(probeS, 3)} s)`);
    console.log(
      `\nratio mediad/curl  ${fmt(ratio, 3)}   target >= ${TARGET_RATIO}   ${verdict(ratio >= TARGET_RATIO)}`,
    );
    console.log(
      `peak RSS growth    ${fmt(rssGrowth, 1)} MB   target < ${TARGET_RSS_MB} MB   ${verdict(rssGrowth < TARGET_RSS_MB)}`,
    );
    console.log(
      `(mediad vs node + undici dropping the bytes: ${fmt(mediadMBps / nodeMBps, 3)}; node + undici vs curl -o /dev/null: ${fmt(nodeMBps / curlMBps, 3)})`,
    );
    console.log(
      `(mediad vs curl -o file: ${fmt(mediadMBps / fileMBps, 3)}; vs curl -o file + fsync: ${fmt(mediadMBps / diskMBps, 3)}; curl -o file vs curl -o /dev/null: ${fmt(fileMBps / curlMBps, 3)})`,
    );
    if (prof) {
      console.log(`\nCPU profile of mediad, busy self time ${fmt(prof.totalMs / 1000, 1)} s:`);
      console.log(
        table(
          ['function (self)', 'ms', '%'],
          prof.functions.map(([k, v]) => [k.slice(0, 110), fmt(v, 0), fmt((100 * v) / prof!.totalMs, 1)]),
        ),
      );
    }
    const out = await writeResults(profile ? 'ingest-large-profile' : 'ingest-large', {
      date: new Date().toISOString(),
      node: process.version,
      cpus: 2,
      bytes: size,
      runs: RUNS,
      curl: { devNullSeconds: curlNull, mbps: curlMBps },
      nodeDiscard: { seconds: nodeNull, mbps: nodeMBps },
      curlToFile: { seconds: curlFile, mbps: fileMBps },
      curlToDiskWithFsync: { seconds: curlDisk, mbps: diskMBps },
      mediad: { warmUp: warm, runs, mbps: mediadMBps, downloadMBps: dlTimes.length ? mbps(median(dlTimes)) : null },
      probeSeconds: probeS,
      ratio,
      rssGrowthMB: rssGrowth,
      targets: { ratio: TARGET_RATIO, rssGrowthMB: TARGET_RSS_MB },
      pass: { ratio: ratio >= TARGET_RATIO, rss: rssGrowth < TARGET_RSS_MB },
      profile: prof && { totalMs: prof.totalMs, functions: prof.functions },
    });
    console.log(`\nJSON summary: ${path.relative(process.cwd(), out)}`);
  } finally {
    for (const c of children.reverse()) await c.stop();
    await removeDir(dataDir);
  }
}

if (process.argv[2] === '--child') {
  if (process.argv[3] === 'discard') await discard(process.argv[4]!);
  else await origin(process.argv[4]!, process.argv[5]!);
} else {
  await main();
}
