import os from 'node:os';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { clientSettings, type Config } from '../config.js';
import { caFileForClients, localCaPath } from '../tls/ca-file.js';
import { caFingerprint } from '../tls/trust-steps.js';
import { formatTrust, installCa } from '../tls/trust-install.js';
import { describeUpload, readCa, upload, UploadError } from './upload.js';

// The commands a person runs beside the server on its machine: trust its local certificate
// authority (`mediad tls trust`) and upload a file to it (`mediad upload FILE`).

export function registerClientCommands(program: Command, config: () => Config): void {
  program
    .command('upload')
    .description(
      'Upload a file from this machine to mediad (a new media with the file as its original) and print its id and the next step. Uses MEDIAD_API_KEY (or --key) and this server’s address and local CA.',
    )
    .argument('<file>', 'the file to upload')
    .option('--folder <folder>', 'the folder to put it in', 'uploads')
    .option('--filename <name>', 'the name to store it under (default: the file’s own)')
    .option('--key <key>', 'an API key of the project (default: $MEDIAD_API_KEY)')
    .option('--url <url>', 'mediad’s address (default: MEDIAD_PUBLIC_URL, as the server uses it)')
    .option('--ca <file>', 'the CA file to trust (default: the local CA, when the server uses it)')
    .option('--json', 'print the file as JSON')
    .action(
      async (
        file: string,
        opts: { folder: string; filename?: string; key?: string; url?: string; ca?: string; json?: boolean },
      ) => {
        const settings = config();
        const key = opts.key ?? clientSettings().apiKey;
        if (!key) {
          process.stderr.write(
            'mediad: no API key: set MEDIAD_API_KEY (`mediad keys create … --export` prints the line) or pass --key\n',
          );
          process.exit(2);
        }
        const caFile = opts.ca ?? caFileForClients(settings);
        const o = {
          file,
          base: (opts.url ?? settings.publicUrl).replace(/\/+$/, ''),
          key,
          ca: await readCa(caFile).catch(() => null),
          caFile,
          folder: opts.folder,
          ...(opts.filename ? { filename: opts.filename } : {}),
        };
        try {
          const made = await upload(o);
          process.stdout.write(opts.json ? `${JSON.stringify(made)}\n` : describeUpload(o, made));
        } catch (err) {
          if (!(err instanceof UploadError)) throw err;
          process.stderr.write(`mediad: ${err.message}\n`);
          process.exit(1);
        }
      },
    );

  program
    .command('tls')
    .description('The local certificate authority that signs mediad’s HTTPS certificate.')
    .command('trust')
    .description(
      'Install the local CA where this machine’s browsers and tools look for it (Chrome/Chromium and Firefox NSS databases, the system store as root, the macOS keychain, the Windows store) and say what could not be done.',
    )
    .option('--no-system', 'leave the system store alone (only the browsers’ databases)')
    .action(async (opts: { system: boolean }) => {
      const settings = config();
      if (settings.tls) {
        process.stdout.write(
          'mediad uses its own certificate (MEDIAD_TLS_CERT): there is no local certificate authority to trust.\n',
        );
        return;
      }
      const caFile = localCaPath(settings.dataDir);
      const pem = await readFile(caFile, 'utf8').catch(() => null);
      if (!pem) {
        process.stderr.write(
          `mediad: no certificate authority at ${caFile} yet: start mediad once (npm start) to create it, then run this again\n`,
        );
        process.exit(1);
      }
      const fingerprint = caFingerprint(pem);
      const ctx = {
        caFile,
        home: os.homedir(),
        platform: process.platform,
        isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
        nickname: `mediad local CA ${fingerprint.replace(/:/g, '').slice(0, 12)}`,
        system: opts.system,
      };
      const outcomes = await installCa(ctx);
      process.stdout.write(formatTrust(ctx, outcomes));
      if (outcomes.some((o) => o.status === 'failed')) process.exit(1);
    });
}
