import fs from 'node:fs/promises';
import path from 'node:path';
import { generateSecretKey, SECRET_KEY_BYTES } from './sealer.js';

/** Where the embedded default keeps its sealing key when MEDIAD_SECRET_KEY is not set. */
export const SECRET_KEY_FILE = 'secret.key';

/**
 * The data dir's sealing key, made at the first start (mode 0600, beside the TLS keys, never in
 * the database). Processes starting together agree: the first to create the file wins, the
 * others read it.
 */
export async function dataDirSecretKey(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, SECRET_KEY_FILE);
  await fs.mkdir(dataDir, { recursive: true });
  try {
    await fs.writeFile(file, `${generateSecretKey().toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  if (key.length !== SECRET_KEY_BYTES)
    throw new Error(
      `${file} does not hold a ${SECRET_KEY_BYTES}-byte key (base64); restore it, or set MEDIAD_SECRET_KEY`,
    );
  return key;
}
