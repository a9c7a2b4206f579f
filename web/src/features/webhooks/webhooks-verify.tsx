import { Tabs } from 'radix-ui';
import { CopyButton } from '../../components/copy-button';

// Code that checks a delivery's Standard Webhooks signature: headers webhook-id, webhook-timestamp
// and webhook-signature ("v1,<base64 HMAC-SHA256 of id.timestamp.body>", keyed with the base64
// bytes after whsec_; during a rotation two signatures, space-separated). The browser tests run
// the node:crypto and Python snippets against a real delivery.

export const SNIPPETS = {
  standardwebhooks: `// npm install standardwebhooks
import { Webhook } from 'standardwebhooks';

const wh = new Webhook(process.env.MEDIAD_WEBHOOK_SECRET); // whsec_…

// body: the raw request body as received (a string), not JSON re-serialised.
export function verify(headers, body) {
  // Throws when the signature does not match or the timestamp is older than 5 minutes.
  return wh.verify(body, {
    'webhook-id': headers['webhook-id'],
    'webhook-timestamp': headers['webhook-timestamp'],
    'webhook-signature': headers['webhook-signature'],
  });
}
`,
  node: `import { createHmac, timingSafeEqual } from 'node:crypto';

// secret: whsec_…; headers: the request's (lower-case names); body: the raw body as a string.
export function verify(secret, headers, body) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) throw new Error('timestamp too old or in the future');
  const expected = createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${body}\`).digest();
  // During a secret rotation there are two signatures, space-separated: one must match.
  const matches = headers['webhook-signature'].split(' ').some((part) => {
    const [version, signature = ''] = part.split(',');
    const given = Buffer.from(signature, 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new Error('the signature does not match');
  return JSON.parse(body);
}
`,
  python: `import base64, hashlib, hmac, json, time

# secret: whsec_…; headers: the request's (lower-case names); body: the raw body as bytes.
def verify(secret: str, headers: dict, body: bytes) -> dict:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    msg_id, timestamp = headers["webhook-id"], headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > 300:
        raise ValueError("timestamp too old or in the future")
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # During a secret rotation there are two signatures, space-separated: one must match.
    for part in headers["webhook-signature"].split(" "):
        version, _, signature = part.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return json.loads(body)
    raise ValueError("the signature does not match")
`,
} as const;

const TABS: { value: keyof typeof SNIPPETS; label: string }[] = [
  { value: 'standardwebhooks', label: 'JavaScript (standardwebhooks)' },
  { value: 'node', label: 'JavaScript (node:crypto)' },
  { value: 'python', label: 'Python' },
];

export function VerifySnippets() {
  return (
    <section className="card stack" aria-labelledby="verify-heading">
      <h2 id="verify-heading">Verify signatures</h2>
      <p className="muted">
        Every delivery is signed per <a href="https://www.standardwebhooks.com">Standard Webhooks</a> with the
        endpoint’s secret (task webhooks with the project’s). Check the signature on the raw body before trusting it,
        and answer 2xx quickly; anything else is retried.
      </p>
      <Tabs.Root defaultValue="standardwebhooks">
        <Tabs.List className="tabs-list" aria-label="Language">
          {TABS.map((t) => (
            <Tabs.Trigger key={t.value} value={t.value} className="tabs-trigger">
              {t.label}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        {TABS.map((t) => (
          <Tabs.Content key={t.value} value={t.value} className="snippet">
            <pre data-snippet={t.value}>
              <code>{SNIPPETS[t.value]}</code>
            </pre>
            <CopyButton value={SNIPPETS[t.value]} label="Copy code" />
          </Tabs.Content>
        ))}
      </Tabs.Root>
    </section>
  );
}
