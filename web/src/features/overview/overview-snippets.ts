// The overview's getting-started snippets: the first processed file (upload, task, wait) with this
// server's address, its local CA and the project's id filled in. A copy of the server's
// src/api/docs/first-steps.ts (the web app imports nothing from src/):
// test/unit/web-snippets.test.ts fails when the two differ, and test/web/first-hour.test.ts runs
// these as copied from the page.

export interface SnippetContext {
  /** The server's public URL. */
  base: string;
  /** The CA file clients pass (tls/ca-file.ts), or null when the certificate is publicly trusted. */
  caFile: string | null;
  /** A project id to write in, or undefined for `$MEDIAD_PROJECT`. */
  project?: string;
}

/** A 5-second test video, made only when there is no clip.mp4 yet (FFmpeg comes with mediad). */
export const MAKE_CLIP =
  '[ -f clip.mp4 ] || ffmpeg -loglevel error -f lavfi -i testsrc2=duration=5:size=640x360:rate=25 -f lavfi -i sine=duration=5 -shortest -c:v libx264 -pix_fmt yuv420p -c:a aac clip.mp4';

export function firstStepsShell(ctx: SnippetContext): string {
  const curl = `curl -sS${ctx.caFile ? ` --cacert ${ctx.caFile}` : ''} -H "Authorization: Bearer $MEDIAD_API_KEY"`;
  const project = ctx.project ?? '$MEDIAD_PROJECT';
  return `# A video to work on: yours, or a 5-second test clip made with FFmpeg
${MAKE_CLIP}

# 1. Upload it: the answer is the file (in a new media); keep its id
ANSWER=$(${curl} -T clip.mp4 "${ctx.base}/d/${project}/uploads/clip-$(date +%s).mp4")
echo "$ANSWER"
FILE_ID=$(echo "$ANSWER" | grep -o '"id":"file_[^"]*"' | head -1 | cut -d'"' -f4)
echo "file: $FILE_ID"

# 2. Make a 640 px WebP poster from it: the answer is the task, pending; keep its id
ANSWER=$(${curl} -H 'Content-Type: application/json' \\
  -d '{"kind": "image", "file_id": "'"$FILE_ID"'", "width": 640, "format": "webp"}' ${ctx.base}/tasks)
echo "$ANSWER"
TASK_ID=$(echo "$ANSWER" | grep -o '"id":"task_[^"]*"' | head -1 | cut -d'"' -f4)
echo "task: $TASK_ID"

# 3. Wait until it ends; the answer's output.url is the poster
until ${curl} ${ctx.base}/tasks/$TASK_ID | grep -E '"status":"(completed|failed|cancelled)"'; do sleep 1; done`;
}

export function firstStepsNode(ctx: SnippetContext): string {
  const project = ctx.project ? `'${ctx.project}'` : 'process.env.MEDIAD_PROJECT';
  return `// first-task.mjs: run beside clip.mp4 (the curl tab makes one) with
//   ${ctx.caFile ? `NODE_EXTRA_CA_CERTS=${ctx.caFile} ` : ''}node first-task.mjs
import { readFile } from 'node:fs/promises';

const base = '${ctx.base}';
const project = ${project};

async function call(path, init = {}) {
  const res = await fetch(base + path, {
    ...init,
    headers: { Authorization: \`Bearer \${process.env.MEDIAD_API_KEY}\`, ...init.headers },
  });
  const body = await res.json();
  if (!res.ok) {
    console.error(\`\${res.status} \${body.error.code}: \${body.error.message}\`);
    process.exit(1);
  }
  return body.data;
}

// 1. Upload the file (it becomes a file in a new media)
const file = await call(\`/d/\${project}/uploads/clip-\${Date.now()}.mp4\`, {
  method: 'PUT',
  body: await readFile('clip.mp4'),
});
console.log('file:', file.id);

// 2. Make a 640 px WebP poster from it
let task = await call('/tasks', {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ kind: 'image', file_id: file.id, width: 640, format: 'webp' }),
});

// 3. Wait until it ends
while (!['completed', 'failed', 'cancelled'].includes(task.status)) {
  await new Promise((r) => setTimeout(r, 1000));
  task = await call(\`/tasks/\${task.id}\`);
}
console.log(task.status, task.output?.url ?? task.error);`;
}
