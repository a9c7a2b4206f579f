import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { ROOT } from '../helpers/paths.js';

// `npm test` names its folders one by one (the browser tests first, the short unit tests last, so
// the two runners do not end with one long file running alone): a new folder of tests must be added
// there, or it would never run.

it('npm test runs every folder of test/ that holds tests', () => {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const folders = fs
    .readdirSync(path.join(ROOT, 'test'), { withFileTypes: true })
    .filter(
      (d) => d.isDirectory() && fs.readdirSync(path.join(ROOT, 'test', d.name)).some((f) => f.endsWith('.test.ts')),
    )
    .map((d) => d.name);
  assert.ok(folders.length >= 6, folders.join());
  for (const script of ['test', 'test:timing'])
    for (const folder of folders)
      assert.ok(scripts[script]!.includes(`dist/test/${folder}/*.test.js`), `${script} runs test/${folder}`);
});
