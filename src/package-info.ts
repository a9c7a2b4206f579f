import { readFileSync } from 'node:fs';
import path from 'node:path';

// mediad's own version and the Node versions it supports, read once from its package.json (the
// one place they are written): `mediad --version`, /openapi.json, GET /system, /docs and the
// User-Agent of its outbound calls all say the same. Found by walking up from this file, which
// sits at src/ when run with tsx and at dist/src/ when built.

interface PackageInfo {
  version: string;
  /** package.json's engines.node, e.g. ">=20.19.0". */
  nodeRange: string;
}

function read(): PackageInfo {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
        engines?: { node?: string };
      };
      if (pkg.name === 'mediad' && pkg.version) return { version: pkg.version, nodeRange: pkg.engines?.node ?? '' };
    } catch {
      // no package.json here: look in the parent
    }
    if (path.dirname(dir) === dir) return { version: '0.0.0', nodeRange: '' };
  }
}

export const PACKAGE = read();
export const MEDIAD_VERSION = PACKAGE.version;
/** The User-Agent of mediad's outbound requests (sources, webhooks, providers). */
export const USER_AGENT = `mediad/${MEDIAD_VERSION} (+https://github.com/mediad)`;
