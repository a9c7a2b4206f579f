import type { IncomingMessage, ServerResponse } from 'node:http';
import { plainCaUrl } from './trust-steps.js';

// Plain HTTP on the HTTPS port, from a person or a client that does not trust mediad yet: the
// local certificate authority is served at /ca.crt (to trust it; check its SHA-256 against the
// one the server logged), and a browser gets a page that says where mediad is and how to trust it
// instead of a JSON error. Everything else keeps the https_required answer (server.ts).

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(target: string, caUrl: string | null, fingerprint: string | null): string {
  const steps = caUrl
    ? `<p>If the browser then warns that the connection is not private, it does not trust mediad's own certificate authority yet. Install it once:</p>
<ol>
<li><a href="/ca.crt" download="mediad-ca.crt">Download the certificate authority</a> (${escape(caUrl)}) and check that its SHA-256 is <code>${escape(fingerprint ?? '')}</code>, as the server's log says.</li>
<li>Chrome, Chromium, Edge on Linux: <code>mkdir -p $HOME/.pki/nssdb &amp;&amp; certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n mediad -i mediad-ca.crt</code>, then restart the browser.</li>
<li>Firefox: Settings › Privacy &amp; Security › Certificates › View Certificates › Authorities › Import, and tick “Trust this CA to identify websites”.</li>
<li>macOS: <code>sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain mediad-ca.crt</code></li>
<li>Windows, as administrator: <code>certutil -addstore -f ROOT mediad-ca.crt</code></li>
</ol>
<p>On the server's own machine, <code>mediad tls trust</code> does this for you.</p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>mediad: use HTTPS</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem}code{background:#0001;padding:0 .2em;word-break:break-all}</style>
</head><body>
<h1>mediad answers over HTTPS only</h1>
<p>Open <a href="${escape(target)}">${escape(target)}</a>.</p>
${steps}
</body></html>
`;
}

/** Answers the request when it is the CA download or a browser's visit; false leaves it to the caller. */
export function answerFirstContact(
  req: IncomingMessage,
  res: ServerResponse,
  publicUrl: string,
  /** The local CA (null with a certificate of the operator's own), and its SHA-256. */
  ca: { pem: string; fingerprint: string } | null,
): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const pathname = (req.url ?? '/').split('?')[0];
  if (pathname === '/ca.crt' && ca) {
    const pem = ca.pem;
    res.writeHead(200, {
      'content-type': 'application/x-pem-file',
      'content-disposition': 'attachment; filename="mediad-ca.crt"',
      'content-length': Buffer.byteLength(pem),
      'cache-control': 'no-cache',
      connection: 'close',
    });
    res.end(req.method === 'HEAD' ? undefined : pem);
    return true;
  }
  if (!/\btext\/html\b/.test(req.headers.accept ?? '')) return false;
  const html = page(`${publicUrl}${req.url ?? '/'}`, ca ? plainCaUrl(publicUrl) : null, ca?.fingerprint ?? null);
  res.writeHead(400, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    connection: 'close',
  });
  res.end(req.method === 'HEAD' ? undefined : html);
  return true;
}
