import { X509Certificate } from 'node:crypto';

// How to make browsers and clients trust mediad's local certificate authority, step by step:
// logged at the first start (a plain block on a terminal), in the README, and what
// `mediad tls trust` does itself where it can (tls/trust-install.ts).

export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The CA's SHA-256 fingerprint as browsers show it (AB:CD:…), to check a downloaded copy against. */
export function caFingerprint(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

/** Where the CA can be downloaded: the plain-HTTP answer on the HTTPS port (tls/first-contact.ts). */
export function plainCaUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `http://${url.host}/ca.crt`;
}

/** The steps, one per line; `fingerprint` (caFingerprint) is shown when known. */
export function trustSteps(caCertPath: string, baseUrl = 'https://localhost:8443', fingerprint?: string): string[] {
  const p = shellQuote(caCertPath);
  const base = baseUrl.replace(/\/+$/, '');
  return [
    `The certificate authority: ${caCertPath}${fingerprint ? `  (SHA-256 ${fingerprint})` : ''}`,
    '`mediad tls trust` installs it for this machine’s browsers and system where it can, and says what it could not.',
    'By hand, once per browser or client:',
    `  Chrome, Chromium, Edge on Linux:  mkdir -p $HOME/.pki/nssdb && certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n mediad -i ${p}`,
    '    (certutil is in libnss3-tools; restart the browser afterwards)',
    `  Firefox:  Settings › Privacy & Security › Certificates › View Certificates › Authorities › Import ${p},`,
    '    then tick “Trust this CA to identify websites”',
    `  macOS (Safari, Chrome):  sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ${p}`,
    '  Windows (Edge, Chrome), in a terminal run as administrator:  certutil -addstore -f ROOT mediad-ca.crt',
    `  Another machine: download it from ${plainCaUrl(base)} and compare its SHA-256 with the one above`,
    `  Node.js clients:  NODE_EXTRA_CA_CERTS=${p}`,
    `  curl:             curl --cacert ${p} ${base}/health`,
    '  Debian/Ubuntu system store (as root):',
    `    cp ${p} /usr/local/share/ca-certificates/mediad-local-ca.crt && update-ca-certificates`,
    `Reached by an IP address or another name (from another machine on the network)? Set MEDIAD_PUBLIC_URL=https://<that address>:${new URL(base).port || '443'} and restart: the certificate then covers that name and every link uses it (now they say ${base}).`,
  ];
}
