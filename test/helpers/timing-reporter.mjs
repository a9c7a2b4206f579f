// A node:test reporter that says where the suite's time goes: each file's time (the sum of its
// top-level tests, which run one after another), the folders' sums, and the slowest tests. Used by
// `npm run test:timing`; the figures are also written as JSON to .test-cache/timings.json.
import fs from 'node:fs';
import path from 'node:path';

export default async function* timingReporter(source) {
  const files = new Map();
  const tests = [];
  const failures = [];
  const started = Date.now();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, name, details } = event.data;
    if (event.type === 'test:fail' && details?.type !== 'suite')
      failures.push(
        `${file ? path.relative(process.cwd(), file) : '?'}: ${name}: ${details?.error?.cause?.message ?? details?.error?.message ?? ''}`,
      );
    if (!file || nesting !== 0) continue;
    const rel = path.relative(process.cwd(), file);
    const ms = details?.duration_ms ?? 0;
    files.set(rel, (files.get(rel) ?? 0) + ms);
    tests.push({ file: rel, name, ms });
  }
  const folders = new Map();
  for (const [file, ms] of files) {
    const folder = file.split(path.sep).slice(0, 2).join('/');
    folders.set(folder, (folders.get(folder) ?? 0) + ms);
  }
  const s = (ms) => `${(ms / 1000).toFixed(1).padStart(7)} s`;
  const total = [...files.values()].reduce((a, b) => a + b, 0);
  yield `\nwall ${s(Date.now() - started)}; sum of files ${s(total)}; ${files.size} files; ${failures.length} failed tests\n`;
  for (const f of failures) yield `  FAILED ${f}\n`;
  yield '\nby folder:\n';
  for (const [folder, ms] of [...folders].sort((a, b) => b[1] - a[1])) yield `${s(ms)}  ${folder}\n`;
  yield '\nslowest files:\n';
  for (const [file, ms] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 25)) yield `${s(ms)}  ${file}\n`;
  yield '\nslowest top-level tests:\n';
  for (const t of tests.sort((a, b) => b.ms - a.ms).slice(0, 15)) yield `${s(t.ms)}  ${t.file}: ${t.name}\n`;
  fs.mkdirSync('.test-cache', { recursive: true });
  fs.writeFileSync(
    '.test-cache/timings.json',
    JSON.stringify(
      { wallMs: Date.now() - started, files: Object.fromEntries(files), folders: Object.fromEntries(folders) },
      null,
      2,
    ),
  );
}
