import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from './paths.js';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CreateBucketCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../../src/storage/s3-blob-store.js';

// s3rver runs in a child process: its ListObjectsV2 continuation tokens use DES, which Node 20's
// OpenSSL 3 only has with --openssl-legacy-provider (in-process, paginated lists fail with
// ERR_OSSL_EVP_UNSUPPORTED). It also keeps the server's memory out of this process's measurements.
const SERVER_SCRIPT = path.join(ROOT, 'test/helpers/s3rver-child.cjs');

async function spawnS3rver(directory: string, bucket: string): Promise<{ child: ChildProcess; port: number }> {
  const env = { ...process.env, S3RVER_DIR: directory, S3RVER_BUCKET: bucket };
  const child = spawn(process.execPath, ['--openssl-legacy-provider', SERVER_SCRIPT], {
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await Promise.race([
    once(createInterface({ input: child.stdout! }), 'line'),
    once(child, 'exit').then(([code]) =>
      Promise.reject(new Error(`s3rver exited with ${String(code)} before listening`)),
    ),
  ])) as [string];
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

export interface LocalS3 {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  bucket: string;
  /** A client for this server (path-style, as the service is configured for it). */
  client: S3Client;
  createBucket(name: string): Promise<void>;
  /** Every key in `bucket` (default: the first bucket) under `prefix`. */
  keys(prefix?: string, bucket?: string): Promise<string[]>;
  /** Env of a mediad server storing into `bucket` under `prefix`. */
  env(prefix: string, extra?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

/**
 * An S3 protocol server (s3rver) on loopback, storing under a temp directory, with `bucket` created.
 * s3rver accepts its own fixed credentials; they are set in this process's env, where the AWS SDK's
 * default chain (used by the service too) finds them.
 */
export async function startS3(bucket = 'mediad-test'): Promise<LocalS3> {
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  process.env.AWS_EC2_METADATA_DISABLED = 'true'; // never probe an instance metadata service
  const directory = await mkdtemp(path.join(tmpdir(), 's3rver-'));
  const { child, port } = await spawnS3rver(directory, bucket);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = createS3Client({ endpoint, region: 'us-east-1', forcePathStyle: true });

  return {
    endpoint,
    bucket,
    client,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    async keys(prefix = '', inBucket = bucket) {
      const keys: string[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: inBucket, Prefix: prefix, ContinuationToken }),
        );
        for (const obj of page.Contents ?? []) if (obj.Key) keys.push(obj.Key);
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return keys.sort();
    },
    env(prefix, extra = {}) {
      return {
        MEDIAD_STORAGE_URL: `s3://${bucket}/${prefix}`,
        MEDIAD_S3_ENDPOINT: endpoint,
        MEDIAD_S3_FORCE_PATH_STYLE: 'true',
        ...extra,
      };
    },
    async close() {
      client.destroy();
      const exited = once(child, 'exit');
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      await rm(directory, { recursive: true, force: true });
    },
  };
}
