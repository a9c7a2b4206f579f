// Image URLs (issue 24), each beside its competitor in the same run:
//   miss  1200x800 JPEG -> 400 px WebP through an uncached /img URL (HTTPS keep-alive, client-side time)
//         vs raw sharp doing the same resize from the same stored file, in this process   target <= 1.10x
//         (also the CPU time of each side: mediad's process vs this process during the sharp call)
//         and beside both, a bare Fastify HTTPS server doing that sharp call per request (the
//         floor of any HTTP image service on this machine: what is left of mediad's ratio above it
//         is mediad's own)
//   hit   a cached /img URL vs the same bytes through the plain file delivery route /d/…
//         (wrk -c64, req/s and p99, and the server's CPU per request)                      target >= 0.90x
//   api   GET /files/{id} p99 while 64 connections request uncached image URLs vs idle      target <= 2x
// Run: npm run bench:image-urls [-- --profile]   (the built `mediad serve` on loopback, as users
// start it; bench/results/image-urls.json). BENCH_ONLY=miss|hit|api runs the misses and that part only.
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { Agent, request } from 'undici';
import { api, median, upload, type Client } from './child.js';
import {
  cpuMs,
  createKeyCli,
  fmt,
  freePort,
  mediadEnv,
  parseWrk,
  startMediad,
  startRole,
  summarizeProfile,
  table,
  tempDataDir,
  threadCpuMs,
  writeResults,
} from './lib.js';
import { fixture } from '../test/helpers/fixtures.js';

const run = promisify(execFile);
const RUNS = Number(process.env.BENCH_RUNS ?? 25);
const OPTIONS = 'width:400,format:webp,quality:80';
const profile = process.argv.includes('--profile');
// Hits: short alternating windows (the machine's drift is slower than a window pair).
const HIT_ROUNDS = Number(process.env.BENCH_HIT_ROUNDS ?? 8);
const HIT_SECONDS = Number(process.env.BENCH_HIT_SECONDS ?? 2);

const SCRIPT = fileURLToPath(import.meta.url);

/** The floor: Fastify over HTTPS (mediad's certificate) answering each request with that sharp call on a stored file. */
async function bareImageServer(tlsDir: string, blobDir: string): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const [cert, key] = await Promise.all([
    fs.readFile(path.join(tlsDir, 'server.crt'), 'utf8'),
    fs.readFile(path.join(tlsDir, 'server.key'), 'utf8'),
  ]);
  const app = Fastify({ https: { cert, key }, logger: false });
  app.get<{ Params: { id: string } }>('/resize/:id', async (req, reply) => {
    const data = await sharp(path.join(blobDir, path.basename(req.params.id)))
      .autoOrient()
      .resize({ width: 400 })
      .webp({ quality: 80 })
      .toBuffer();
    return reply.type('image/webp').send(data);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`READY ${(app.server.address() as { port: number }).port}\n`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

const sign = (key: string, p: string) => createHmac('sha256', key).update(p).digest('base64url');

async function get(m: Client, url: string, agent = m.agent): Promise<number> {
  const res = await request(url, { dispatcher: agent });
  const body = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${body.toString().slice(0, 200)}`);
  return body.length;
}

/** A miss's Server-Timing parts (ms): wait, render, total. */
async function getMiss(m: Client, url: string): Promise<Record<string, number>> {
  const res = await request(url, { dispatcher: m.agent });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
  const parts: Record<string, number> = {};
  for (const [, name, dur] of String(res.headers['server-timing']).matchAll(/(\w+);dur=([\d.]+)/g))
    parts[name!] = Number(dur);
  return parts;
}

/** GET /img/- : the image route's 404, answered before any lookup. */
async function floor(m: Client): Promise<void> {
  const res = await request(`${m.base}/img/-`, { dispatcher: m.agent });
  await res.body.dump();
  if (res.statusCode !== 404) throw new Error(`/img/-: ${res.statusCode}`);
}

async function wrk(url: string, connections: number, seconds: number, headers: Record<string, string> = {}) {
  const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const args = [`-t${Math.min(2, connections)}`, `-c${connections}`, `-d${seconds}s`, '--latency', ...h, url];
  const { stdout } = await run('wrk', args, { maxBuffer: 1 << 20 });
  let r: ReturnType<typeof parseWrk>;
  try {
    // wrk pads a latency in seconds ("1.01s "): the shared parser reads lines without trailing blanks.
    r = parseWrk(stdout.replace(/[ \t]+$/gm, ''));
  } catch (err) {
    console.log(stdout);
    throw err;
  }
  if (r.errors) console.log(`  wrk ${url.slice(0, 60)}…: ${r.errors}`);
  return r;
}

/** The machine's load average over the last minute (the figures are wall-clock on a shared machine). */
const load = () => os.loadavg()[0]!;

async function main() {
  const dataDir = await tempDataDir('image-urls');
  const env = mediadEnv(dataDir, await freePort(), { MEDIAD_IMAGE_URL_MISSES_PER_MINUTE: '0' });
  const created = await createKeyCli(env);
  const profDir = path.join(dataDir, 'prof');
  const server = await startMediad(env, profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
  const m: Client = {
    base: server.url,
    key: created.key,
    agent: new Agent({ connect: { ca: server.ca }, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000 }),
  };
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-imgurl-'));
  const loads: number[] = [load()];
  try {
    const project = (await api(m, 'GET', '/project')).id as string;
    const key = (await api(m, 'POST', '/project/image-url-key/reveal')).key as string;
    const url = (file: string, options = OPTIONS) => {
      const p = `/${options}/${file}`;
      return `${m.base}/img/${project}/${sign(key, p)}${p}`;
    };
    const src = path.join(dir, 'src.jpg');
    await sharp(await fixture('image-jpeg-4000x3000'))
      .resize(1200, 800)
      .jpeg({ quality: 85 })
      .toFile(src);

    // Miss: each run a new file id of the same bytes (identical work, never cached), paired with
    // raw sharp reading the stored blob of that file.
    const ids: string[] = [];
    for (let i = 0; i < RUNS + 2; i++) ids.push((await upload(m, src, `m${i}.jpg`)).id as string);
    const blobDir = path.join(dataDir, 'blobs', 'projects', project, 'files');
    const blob = (id: string) => path.join(blobDir, id);
    const bareServer = await startRole(SCRIPT, 'bare', [path.join(dataDir, 'tls'), blobDir]);
    const bareBase = `https://127.0.0.1:${bareServer.port}`;
    const bare: number[] = [];
    const mediad: number[] = [];
    const raw: number[] = [];
    const again: number[] = [];
    const trip: number[] = [];
    /** From the miss's Server-Timing: the computation, the rest of the time in the server, the rest outside it. */
    const render: number[] = [];
    const inServer: number[] = [];
    const outside: number[] = [];
    // mediad's CPU while idle (its pollers), to tell it apart from a miss's own.
    const idle0 = await cpuMs(server.pid);
    const idleStart = performance.now();
    await new Promise((r) => setTimeout(r, 2000));
    const idleCpuPerMs = ((await cpuMs(server.pid)) - idle0) / (performance.now() - idleStart);
    let mediadCpu = 0;
    let mediadWindowMs = 0;
    let sharpCpu = 0;
    // Where each side's CPU goes: the main thread, libvips' workers, the rest (libuv's pool, V8's helpers).
    const groups = { mediad: { main: 0, vips: 0, other: 0 }, sharp: { main: 0, vips: 0, other: 0 } };
    const addGroups = (
      into: { main: number; vips: number; other: number },
      a: { main: number; vips: number; other: number },
      b: { main: number; vips: number; other: number },
    ) => {
      into.main += b.main - a.main;
      into.vips += b.vips - a.vips;
      into.other += b.other - a.other;
    };
    for (let i = 0; i < ids.length; i++) {
      // The transport's own floor: a round trip through the same route that stops at once (a 404).
      let h = performance.now();
      await floor(m);
      const d = performance.now() - h;
      const cpu0 = await cpuMs(server.pid);
      const t0 = await threadCpuMs(server.pid);
      const w0 = performance.now();
      h = performance.now();
      const st = await getMiss(m, url(ids[i]!));
      const a = performance.now() - h;
      // mediad stores the result after answering (a file write, its row, the usage): let that end
      // before raw sharp runs, so it neither slows sharp nor goes uncounted in mediad's CPU.
      await new Promise((r) => setTimeout(r, 40));
      const cpu1 = await cpuMs(server.pid);
      const t1 = await threadCpuMs(server.pid);
      const w1 = performance.now();
      // Raw sharp as sharp's documentation shows it, with the library's defaults in both processes
      // (neither side sets sharp.concurrency or sharp.cache): the stored file read from disk, the
      // same resize and WebP encode to a buffer.
      const s0 = await threadCpuMs(process.pid);
      const c0 = process.cpuUsage();
      let s = performance.now();
      await sharp(blob(ids[i]!)).autoOrient().resize({ width: 400 }).webp({ quality: 80 }).toBuffer();
      const b = performance.now() - s;
      const c1 = process.cpuUsage(c0);
      const s1 = await threadCpuMs(process.pid);
      // The floor: a bare Fastify HTTPS route making the same image with the same call.
      s = performance.now();
      await get(m, `${bareBase}/resize/${ids[i]!}`);
      const e = performance.now() - s;
      // The same URL again: the request's cost without the computation (HTTPS, checks, lookups).
      s = performance.now();
      await get(m, url(ids[i]!));
      const c = performance.now() - s;
      if (i < 2) continue; // warm-up
      mediad.push(a);
      bare.push(e);
      render.push(st.render!);
      inServer.push(st.total! - st.render! - st.wait!);
      outside.push(a - st.total!);
      raw.push(b);
      again.push(c);
      trip.push(d);
      mediadCpu += cpu1 - cpu0;
      addGroups(groups.mediad, t0, t1);
      addGroups(groups.sharp, s0, s1);
      mediadWindowMs += w1 - w0;
      sharpCpu += (c1.user + c1.system) / 1000;
    }
    loads.push(load());
    await bareServer.stop();
    const miss = {
      mediadMs: median(mediad),
      sharpMs: median(raw),
      bareFastifySharpMs: median(bare),
      /** The floor's own ratio to raw sharp: HTTPS and a route around the same call. */
      bareRatio: median(bare.map((x, i) => x / raw[i]!)),
      /** mediad against the floor: what mediad adds beyond any HTTP image service. */
      ratioToBare: median(mediad.map((x, i) => x / bare[i]!)),
      sameUrlCachedMs: median(again),
      healthRoundTripMs: median(trip),
      /** mediad's side, split by its Server-Timing: the computation, the rest of the server's time, and outside the server (TLS, the network stack, the client). */
      renderMs: median(render),
      inServerMs: median(inServer),
      outsideServerMs: median(outside),
      /** The ratio with the transport's round trip taken off mediad's side. */
      ratioWithoutTransport: median(mediad.map((x, i) => (x - trip[i]!) / raw[i]!)),
      ratio: median(mediad.map((x, i) => x / raw[i]!)),
      /** CPU time per miss: mediad's whole process (10 ms ticks, summed over the runs) vs this process during the sharp call. */
      mediadCpuMs: mediadCpu / mediad.length,
      /** The same less what the idle server spends in as long (its pollers): the miss's own CPU, its store included. */
      mediadCpuLessIdleMs: (mediadCpu - idleCpuPerMs * mediadWindowMs) / mediad.length,
      sharpCpuMs: sharpCpu / raw.length,
      cpuRatio: mediadCpu / sharpCpu,
      /** CPU ms per miss by thread group (10 ms ticks summed over the runs; the sharp side includes the bench's /proc reads). */
      cpuByThread: Object.fromEntries(
        Object.entries(groups).map(([side, g]) => [
          side,
          { main: g.main / mediad.length, vips: g.vips / mediad.length, other: g.other / mediad.length },
        ]),
      ),
      target: 1.1,
    };
    console.log(
      `miss: mediad ${fmt(miss.mediadMs)} ms, raw sharp ${fmt(miss.sharpMs)} ms, ${fmt(miss.ratio, 3)}x (target <= 1.10); ` +
        `the same URL again (cached): ${fmt(miss.sameUrlCachedMs)} ms; 404 round trip ${fmt(miss.healthRoundTripMs)} ms, ` +
        `ratio without it ${fmt(miss.ratioWithoutTransport, 3)}x; CPU per miss ${fmt(miss.mediadCpuMs)} ms (${fmt(miss.mediadCpuLessIdleMs)} ms less the idle server's) vs ${fmt(miss.sharpCpuMs)} ms ` +
        `(${fmt(miss.cpuRatio, 3)}x); load ${fmt(loads.at(-1)!, 2)}`,
    );
    console.log(
      `  bare Fastify HTTPS + the same sharp call: ${fmt(miss.bareFastifySharpMs)} ms, ${fmt(miss.bareRatio, 3)}x raw sharp; mediad ${fmt(miss.ratioToBare, 3)}x of it`,
    );
    console.log(
      `  mediad's miss by its Server-Timing: render ${fmt(miss.renderMs, 2)} ms, the rest of the server ${fmt(miss.inServerMs, 2)} ms, outside the server ${fmt(miss.outsideServerMs, 2)} ms`,
    );
    const g = (x: { main: number; vips: number; other: number }) =>
      `main ${fmt(x.main)} ms, libvips ${fmt(x.vips)} ms, other threads ${fmt(x.other)} ms`;
    console.log(
      `  CPU per miss by thread: mediad ${g(miss.cpuByThread.mediad!)}; raw sharp ${g(miss.cpuByThread.sharp!)}`,
    );
    const results: Record<string, unknown> = { miss, runs: RUNS };
    const only = process.env.BENCH_ONLY;
    if (only === undefined || only === 'hit') Object.assign(results, await hits());
    if (only === undefined || only === 'api') Object.assign(results, await apiUnderMisses());
    results.loadAverage = loads;
    if (profile) {
      await server.stop();
      const prof = await summarizeProfile(profDir, 25);
      console.log(`\nCPU profile of mediad (${prof.file}), busy ${fmt(prof.totalMs / 1000, 2)} s:`);
      for (const rows of [prof.areas, prof.functions, prof.inclusive])
        console.log(
          `${table(
            ['', 'ms', '%'],
            rows.map(([k, v]) => [k.slice(0, 110), fmt(v, 0), fmt((100 * v) / prof.totalMs, 1)]),
          )}\n`,
        );
    }
    const file = await writeResults(profile ? 'image-urls-profile' : 'image-urls', results);
    console.log(`results: ${file}`);

    async function hits() {
      // Hit vs the plain file route, same bytes: the cached result is uploaded as a file.
      const hitUrl = url(ids[0]!);
      const bytes = Buffer.from(await (await request(hitUrl, { dispatcher: m.agent })).body.arrayBuffer());
      await fs.writeFile(path.join(dir, 'same.webp'), bytes);
      await upload(m, path.join(dir, 'same.webp'), 'same.webp');
      const fileUrl = `${m.base}/d/${project}/bench/same.webp`;
      await get(m, hitUrl);
      await get(m, fileUrl);
      const hits: number[] = [];
      const files: number[] = [];
      const hitP99: number[] = [];
      const fileP99: number[] = [];
      const hitCpu: number[] = [];
      const fileCpu: number[] = [];
      /** wrk on one URL, and mediad's CPU per request (µs) meanwhile. */
      const measure = async (target: string, cpu: number[]) => {
        const c0 = await cpuMs(server.pid);
        const r = await wrk(target, 64, HIT_SECONDS);
        cpu.push((((await cpuMs(server.pid)) - c0) * 1000) / r.requests);
        return r;
      };
      // Both routes warmed up (JIT, caches) before the measured windows.
      await wrk(hitUrl, 64, 2);
      await wrk(fileUrl, 64, 2);
      for (let r = 0; r < HIT_ROUNDS; r++) {
        // Which route goes first alternates, so the machine's drift within a round falls on both.
        const order = r % 2 === 0 ? ['img', 'file'] : ['file', 'img'];
        for (const which of order) {
          if (which === 'img') {
            const h = await measure(hitUrl, hitCpu);
            hits.push(h.rps);
            hitP99.push(h.p99Ms);
          } else {
            const f = await measure(fileUrl, fileCpu);
            files.push(f.rps);
            fileP99.push(f.p99Ms);
          }
        }
      }
      loads.push(load());
      const hit = {
        imgRps: median(hits),
        imgP99Ms: median(hitP99),
        fileRps: median(files),
        fileP99Ms: median(fileP99),
        ratio: median(hits.map((x, i) => x / files[i]!)),
        p99Ratio: median(hitP99.map((x, i) => x / fileP99[i]!)),
        imgCpuUsPerRequest: median(hitCpu),
        fileCpuUsPerRequest: median(fileCpu),
        rounds: hits.map((x, i) => ({ imgRps: x, fileRps: files[i], imgP99Ms: hitP99[i], fileP99Ms: fileP99[i] })),
        target: 0.9,
      };
      console.log(
        `hit: /img ${hit.imgRps} req/s p99 ${hit.imgP99Ms} ms; /d ${hit.fileRps} req/s p99 ${hit.fileP99Ms} ms; ` +
          `req/s ${fmt(hit.ratio, 3)}x (target >= 0.90), p99 ${fmt(hit.p99Ratio, 3)}x; CPU per request ` +
          `${fmt(hit.imgCpuUsPerRequest, 0)} µs vs ${fmt(hit.fileCpuUsPerRequest, 0)} µs; load ${fmt(loads.at(-1)!, 2)}`,
      );
      return { hit };
    }

    // The API while 64 connections ask for uncached images (new options each time), in rounds
    // that alternate idle and busy so the machine's drift falls on both.
    async function apiUnderMisses() {
      const apiUrl = `${m.base}/files/${ids[0]}`;
      const auth = { authorization: `Bearer ${m.key}` };
      const idleP99: number[] = [];
      const busyP99: number[] = [];
      let made = 0;
      let n = 0;
      for (let round = 0; round < 3; round++) {
        idleP99.push((await wrk(apiUrl, 4, 4, auth)).p99Ms);
        const loadAgent = new Agent({ connect: { ca: server.ca }, connections: 64 });
        let stop = false;
        const worker = async () => {
          while (!stop) {
            const k = n++;
            await get(
              m,
              url(ids[k % ids.length]!, `width:${200 + (k % 1000)},format:webp,quality:${70 + (k % 20)}`),
              loadAgent,
            );
            made++;
          }
        };
        const load = Array.from({ length: 64 }, worker);
        await new Promise((r) => setTimeout(r, 500));
        busyP99.push((await wrk(apiUrl, 4, 4, auth)).p99Ms);
        stop = true;
        await Promise.all(load);
        await loadAgent.close();
      }
      const apiUnder = {
        idleP99Ms: median(idleP99),
        busyP99Ms: median(busyP99),
        imagesMade: made,
        ratio: median(busyP99.map((b, i) => b / idleP99[i]!)),
        target: 2,
      };
      console.log(
        `api: GET /files/{id} p99 idle ${apiUnder.idleP99Ms} ms, under misses ${apiUnder.busyP99Ms} ms (${made} images made), ${apiUnder.ratio.toFixed(2)}x (target <= 2)`,
      );
      loads.push(load());
      return { apiUnder };
    }
  } finally {
    await server.stop();
    await m.agent.close();
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await bareImageServer(process.argv[4]!, process.argv[5]!);
else await main();
