// Resumable uploads (issue 25): the same file uploaded through tus (/uploads/tus, chunks of 8 MiB,
// 64 MiB, and the whole file in one PATCH) against the plain single-request PUT upload
// (PUT /d/<project>/<folder>/<file>) in the same run, on the same server: throughput ratio and
// the server's peak RSS while it receives. The client streams each chunk from the file (no
// client-side buffering), so both paths are measured with the same client costs.
// Run: npm run bench:tus [-- --mb 1024] [--runs 3] [--profile] [--trace 128 (per-PATCH times by offset, per 128 MiB)]
import { createReadStream } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { largeWav } from '../test/helpers/fixtures.js';
import {
  cpuMs,
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
  summarizeProfile,
  table,
  tempDataDir,
  verdict,
  writeResults,
} from './lib.js';

const TARGET_RATIO = 0.85;
const TARGET_RSS_MB = 128;
/** Quiet time after the start before the uploads (see where the idle RSS is measured). */
const SETTLE_MS = 10_000;
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SIZE_MB = arg('mb', 1024);
const RUNS = arg('runs', 3);
const profile = process.argv.includes('--profile');
/** Only the fixed cost of one PATCH: server CPU per 1-byte PATCH over this many PATCHes. */
const FIXED = arg('fixed', 0);
/** The body of each --fixed PATCH (bytes). */
const FIXED_BYTES = arg('fixed-bytes', 1);
/** Per-PATCH wall and server CPU time against the offset, summed per this many MiB of the file. */
const TRACE_MIB = arg('trace', 0);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let reused = 0;
let fresh = 0;
/** One HTTPS request whose body is `file` bytes [start, end) streamed from disk. */
function send(
  url: string,
  agent: https.Agent,
  method: string,
  headers: Record<string, string>,
  body?: { file: string; start: number; end: number },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        agent,
        headers: { ...headers, 'content-length': String(body ? body.end - body.start : 0) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.on('socket', () => (req.reusedSocket ? reused++ : fresh++));
    if (!body) return req.end();
    createReadStream(body.file, { start: body.start, end: body.end - 1, highWaterMark: 1024 * 1024 })
      .on('error', reject)
      .pipe(req);
  });
}

/** Samples a process's RSS until stopped; answers the peak in MB. */
function sampleRss(pid: number) {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, (await rssBytes(pid)) ?? 0);
      await sleep(25);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return mb(peak);
  };
}

/** Where a process's resident memory is (MB): anonymous (of it glibc's main heap), file-backed, and its threads. */
async function memoryParts(pid: number) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  // [heap] is the main malloc arena (brk): buffers freed but kept by glibc show here.
  const smaps = await readFile(`/proc/${pid}/smaps`, 'utf8');
  const heap = /\[heap\]\n(?:.*\n)*?Rss:\s+(\d+) kB/.exec(smaps)?.[1];
  return {
    rss: mb(kb('VmRSS')),
    anon: mb(kb('RssAnon')),
    heap: mb(Number(heap ?? 0) * 1024),
    file: mb(kb('RssFile')),
    threads: Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 0),
  };
}
const partsText = (p: Awaited<ReturnType<typeof memoryParts>>) =>
  `${fmt(p.rss, 0)} MB (anonymous ${fmt(p.anon, 0)}, of it malloc's [heap] ${fmt(p.heap, 0)}; files ${fmt(p.file, 0)}; ${p.threads} threads)`;

async function main() {
  const dataDir = await tempDataDir('tus');
  const children: { stop(): Promise<void> }[] = [];
  try {
    const file = await largeWav(SIZE_MB * 1024 * 1024);
    const size = (await stat(file)).size;
    const port = await freePort();
    const env = mediadEnv(dataDir, port, {
      MEDIAD_MAX_FILE_BYTES: String(8 * 1024 ** 3),
      MEDIAD_MAX_DURATION_SECONDS: String(7 * 86_400),
      MEDIAD_SERVE_WORKERS: 'false',
    });
    const key = await createKeyCli(env);
    const profDir = path.join(dataDir, 'prof');
    const mediad = await startMediad(env, profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
    children.push(mediad);
    const auth = { authorization: `Bearer ${key.key}` };
    // One kept-alive connection, as tus clients (and browsers) reuse theirs between chunks.
    const agent = new https.Agent({ ca: mediad.ca, keepAlive: true, maxSockets: 1 });
    const tus = { ...auth, 'tus-resumable': '1.0.0' };
    let n = 0;

    const removeFile = async (id: string) => {
      const del = await request(`${mediad.url}/files/${id}`, { method: 'DELETE', ca: mediad.ca, headers: auth });
      if (del.status !== 200) throw new Error(`DELETE /files/${id} answered ${del.status}`);
    };
    const put = async () => {
      const t = performance.now();
      const res = await send(`${mediad.url}/d/${key.project_id}/bench/put-${n++}.wav`, agent, 'PUT', auth, {
        file,
        start: 0,
        end: size,
      });
      const seconds = (performance.now() - t) / 1000;
      if (res.status !== 201) throw new Error(`PUT answered ${res.status}: ${res.body}`);
      return { seconds, id: (JSON.parse(res.body) as { data: { id: string } }).data.id };
    };
    const viaTus = async (chunk: number) => {
      const t = performance.now();
      const meta = `filename ${Buffer.from(`tus-${n++}.wav`).toString('base64')},folder ${Buffer.from('bench').toString('base64')}`;
      const created = await send(`${mediad.url}/uploads/tus`, agent, 'POST', {
        ...tus,
        'upload-length': String(size),
        'upload-metadata': meta,
      });
      if (created.status !== 201) throw new Error(`tus POST answered ${created.status}: ${created.body}`);
      const location = String(created.headers.location);
      let fileId = '';
      const trace = TRACE_MIB > 0 && chunk < size ? new Map<number, { n: number; wall: number; cpu: number }>() : null;
      for (let offset = 0; offset < size; offset += chunk) {
        const end = Math.min(size, offset + chunk);
        const t0 = trace ? performance.now() : 0;
        const c0 = trace ? await cpuMs(mediad.pid) : 0;
        const res = await send(
          location,
          agent,
          'PATCH',
          { ...tus, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
          { file, start: offset, end },
        );
        if (res.status !== 204) throw new Error(`tus PATCH answered ${res.status}: ${res.body}`);
        fileId = String(res.headers['mediad-file-id'] ?? '');
        if (trace) {
          const bucket = Math.floor(offset / (TRACE_MIB * 1024 * 1024)) * TRACE_MIB;
          const b = trace.get(bucket) ?? { n: 0, wall: 0, cpu: 0 };
          b.n++;
          b.wall += performance.now() - t0;
          b.cpu += (await cpuMs(mediad.pid)) - c0;
          trace.set(bucket, b);
        }
      }
      if (trace)
        console.log(
          `tus ${chunk / 1024 / 1024} MiB chunks, per PATCH by offset (MiB: wall ms / server CPU ms):\n` +
            [...trace].map(([at, b]) => `  ${at}: ${fmt(b.wall / b.n, 1)} / ${fmt(b.cpu / b.n, 1)}`).join('\n'),
        );
      if (!fileId) throw new Error('the last PATCH named no file');
      return { seconds: (performance.now() - t) / 1000, id: fileId };
    };

    if (FIXED > 0) {
      // A PATCH's fixed cost (auth, lookup, lock, the store's record and stat, the answer): 1-byte
      // PATCHes, so the body costs nothing; server CPU per PATCH, and the wall time per PATCH.
      const created = await send(`${mediad.url}/uploads/tus`, agent, 'POST', {
        ...tus,
        'upload-length': String(8 * 1024 ** 3),
      });
      const location = String(created.headers.location);
      const one = path.join(dataDir, 'one-byte');
      await writeFile(one, Buffer.alloc(FIXED_BYTES, 120));
      const patch = (offset: number) =>
        send(
          location,
          agent,
          'PATCH',
          { ...tus, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
          { file: one, start: 0, end: FIXED_BYTES },
        );
      for (let i = 0; i < 50; i++) await patch(i * FIXED_BYTES); // warm-up
      const cpu0 = await cpuMs(mediad.pid);
      const t0 = performance.now();
      for (let i = 50; i < 50 + FIXED; i++) {
        const res = await patch(i * FIXED_BYTES);
        if (res.status !== 204) throw new Error(`PATCH answered ${res.status}: ${res.body}`);
      }
      const wall = (performance.now() - t0) / FIXED;
      console.log(`sockets: ${reused} reused, ${fresh} new`);
      const cpu = ((await cpuMs(mediad.pid)) - cpu0) / FIXED;
      const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
      console.log(
        `\none ${FIXED_BYTES}-byte PATCH, ${FIXED} in a row: server CPU ${fmt(cpu, 2)} ms, wall ${fmt(wall, 2)} ms (load ${load})`,
      );
      let fixedProf = null;
      if (profile) {
        await mediad.stop();
        fixedProf = await summarizeProfile(profDir, 40);
        console.log(JSON.stringify(fixedProf, null, 1));
      }
      await writeResults('uploads-fixed', {
        patches: FIXED,
        cpuMsPerPatch: cpu,
        wallMsPerPatch: wall,
        load,
        fixedProf,
      });
      return;
    }

    const modes: { name: string; run: () => Promise<{ seconds: number; id: string }> }[] = [
      { name: 'PUT (one request)', run: put },
      { name: 'tus, 8 MiB chunks', run: () => viaTus(8 * 1024 * 1024) },
      { name: 'tus, 64 MiB chunks', run: () => viaTus(64 * 1024 * 1024) },
      { name: 'tus, one PATCH', run: () => viaTus(size) },
    ];
    // RSS just after the start, then idle once settled (no request yet), after a first API request
    // (it starts the SQLite reader and request-log writer threads), then once the tus library is
    // loaded (one creation, then terminated). Settled: the start grows V8's young generation to
    // 16 MB, and V8's memory reducer gives it back 8 s after the start's last full collection
    // (V8's default --gc-memory-reducer-start-delay-ms=8000) once the process is quiet, as a server is before
    // most uploads; the young collections an upload asks for (src/api/upload-memory.ts) find
    // almost nothing alive, so it does not grow again.
    await sleep(500);
    const started = mb((await rssBytes(mediad.pid)) ?? 0);
    await sleep(SETTLE_MS);
    const idle = mb((await rssBytes(mediad.pid)) ?? 0);
    const idleParts = await memoryParts(mediad.pid);
    const list = await send(`${mediad.url}/files?limit=1`, agent, 'GET', auth);
    if (list.status !== 200) throw new Error(`GET /files answered ${list.status}: ${list.body}`);
    await sleep(500);
    const firstRequest = mb((await rssBytes(mediad.pid)) ?? 0);
    const firstParts = await memoryParts(mediad.pid);
    const first = await send(`${mediad.url}/uploads/tus`, agent, 'POST', { ...tus, 'upload-length': '10' });
    await send(String(first.headers.location), agent, 'DELETE', tus);
    await sleep(500);
    const tusLoaded = mb((await rssBytes(mediad.pid)) ?? 0);
    // Warm-up (JIT, lazy imports, the page cache holding the source file).
    for (const m of modes) await removeFile((await m.run()).id);
    await sleep(500);
    const baseline = mb((await rssBytes(mediad.pid)) ?? 0);
    const warmParts = await memoryParts(mediad.pid);
    const results = new Map<string, { seconds: number[]; rss: number[]; cpu: number[] }>(
      modes.map((m) => [m.name, { seconds: [], rss: [], cpu: [] }]),
    );
    for (let i = 0; i < RUNS; i++) {
      // Interleaved, so drift (page cache, disk) falls on every mode alike.
      for (const m of modes) {
        const stop = sampleRss(mediad.pid);
        const cpu0 = await cpuMs(mediad.pid);
        const r = await m.run();
        const cpu = (await cpuMs(mediad.pid)) - cpu0;
        const rss = await stop();
        results.get(m.name)!.seconds.push(r.seconds);
        results.get(m.name)!.rss.push(rss);
        results.get(m.name)!.cpu.push(cpu);
        await removeFile(r.id);
      }
    }
    await sleep(500);
    const endParts = await memoryParts(mediad.pid);
    let prof = null;
    if (profile) {
      await mediad.stop();
      prof = await summarizeProfile(profDir);
    }
    const putMBps = mb(size) / median(results.get(modes[0]!.name)!.seconds);
    const putCpu = median(results.get(modes[0]!.name)!.cpu);
    const rows = modes.map((m) => {
      const r = results.get(m.name)!;
      const MBps = mb(size) / median(r.seconds);
      // Server CPU time per upload: on a shared, loaded machine the steadier A/B figure.
      const cpuMsPerGB = median(r.cpu) / (size / 1e9);
      return {
        name: m.name,
        MBps,
        ratio: MBps / putMBps,
        cpuMsPerGB,
        cpuRatio: putCpu / median(r.cpu),
        rss: Math.max(...r.rss),
      };
    });
    const tusRows = rows.slice(1);
    const worst = Math.min(...tusRows.map((r) => r.ratio));
    const rssMax = Math.max(...rows.map((r) => r.rss));
    const load = (await readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');
    console.log(
      `\n${fmt(mb(size), 0)} MB WAV, ${RUNS} runs each (median), mediad serve without workers; load average ${load}\n`,
    );
    console.log(
      table(
        ['upload', 'MB/s', 'vs PUT', 'server CPU ms/GB', 'PUT CPU / this', 'peak RSS MB'],
        rows.map((r) => [
          r.name,
          fmt(r.MBps),
          `${fmt(r.ratio, 2)}x`,
          fmt(r.cpuMsPerGB, 0),
          `${fmt(r.cpuRatio, 2)}x`,
          fmt(r.rss, 0),
        ]),
      ),
    );
    for (const r of tusRows)
      console.log(
        `${r.name} vs PUT: ${fmt(r.ratio, 2)}x wall, ${fmt(r.cpuRatio, 2)}x by server CPU (target >= ${TARGET_RATIO}) ${verdict(Math.max(r.ratio, r.cpuRatio) >= TARGET_RATIO)}`,
      );
    const tusRss = Math.max(...tusRows.map((r) => r.rss));
    console.log(
      `server RSS: ${fmt(started, 0)} MB just after the start, ${fmt(idle, 0)} MB idle once settled, ${fmt(firstRequest, 0)} MB after a first request (+${fmt(firstRequest - idle, 0)}), ${fmt(tusLoaded, 0)} MB once tus is loaded (+${fmt(tusLoaded - firstRequest, 0)}), ${fmt(baseline, 0)} MB after warm-up; peak during tus ${fmt(tusRss, 0)} MB (growth ${fmt(tusRss - baseline, 0)} MB), during PUT ${fmt(rows[0]!.rss, 0)} MB (target < ${TARGET_RSS_MB}) ${verdict(tusRss < TARGET_RSS_MB)}`,
    );
    console.log(
      `idle: ${partsText(idleParts)}\nafter a first request: ${partsText(firstParts)}\nafter warm-up: ${partsText(warmParts)}\nat the end: ${partsText(endParts)}`,
    );
    if (prof) console.log(JSON.stringify(prof, null, 2));
    const out = await writeResults('uploads', {
      load,
      memory: { idle: idleParts, firstRequest: firstParts, warm: warmParts, end: endParts },
      size,
      runs: RUNS,
      rows,
      worst,
      started,
      idle,
      firstRequest,
      tusLoaded,
      baseline,
      rssMax,
      prof,
    });
    console.log(`results: ${out}`);
  } finally {
    for (const c of children) await c.stop();
    await removeDir(dataDir);
  }
}

await main();
