import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';
import type { TlsHosts } from './hosts.js';

const generateKeyPairAsync = promisify(generateKeyPair);
const DAY_MS = 24 * 60 * 60 * 1000;
/** Backdate notBefore a little so clients with slightly slow clocks accept a fresh cert. */
const CLOCK_SKEW_MS = 60 * 60 * 1000;

export const CA_VALIDITY_DAYS = 3650;
/** Browsers (Apple first) reject TLS server certs valid for more than 825 days. */
export const SERVER_VALIDITY_DAYS = 825;

export interface PemPair {
  certPem: string;
  keyPem: string;
}

interface IssueOptions {
  now?: Date;
  days?: number;
}

/** Self-signed local certificate authority. Only signs server certs, never other CAs (pathLen 0). */
export async function createCa(commonName: string, opts: IssueOptions = {}): Promise<PemPair> {
  const { publicKey, privateKey } = await newRsaKey();
  const { notBefore, notAfter } = validity(opts.now, opts.days ?? CA_VALIDITY_DAYS);
  const subject = [
    { shortName: 'CN', value: commonName },
    { shortName: 'O', value: 'mediad' },
  ];
  const certPem = signCert({
    publicKeyPem: publicKey,
    signingKeyPem: privateKey,
    subject,
    issuer: subject,
    notBefore,
    notAfter,
    extensions: [
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ],
  });
  return { certPem, keyPem: privateKey };
}

/** Server certificate for `hosts`, signed by `ca`; never outlives the CA. */
export async function issueServerCert(ca: PemPair, hosts: TlsHosts, opts: IssueOptions = {}): Promise<PemPair> {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const { publicKey, privateKey } = await newRsaKey();
  const range = validity(opts.now, opts.days ?? SERVER_VALIDITY_DAYS);
  const notAfter = range.notAfter > caCert.validity.notAfter ? caCert.validity.notAfter : range.notAfter;
  const certPem = signCert({
    publicKeyPem: publicKey,
    signingKeyPem: ca.keyPem,
    subject: [
      // Clients only look at the SAN; the CN is for humans reading the cert (max 64 chars).
      { shortName: 'CN', value: (hosts.dns[0] ?? hosts.ips[0] ?? 'localhost').slice(0, 64) },
      { shortName: 'O', value: 'mediad' },
    ],
    issuer: caCert.subject.attributes,
    notBefore: range.notBefore,
    notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...hosts.dns.map((value) => ({ type: 2, value })), ...hosts.ips.map((ip) => ({ type: 7, ip }))],
      },
      { name: 'subjectKeyIdentifier' },
      { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
    ],
  });
  return { certPem, keyPem: privateKey };
}

/** Positive 128-bit serial: first byte 0x01..0x7f keeps the DER INTEGER positive and minimal. */
export function randomSerialHex(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) % 0x7f) + 1;
  return bytes.toString('hex');
}

// RSA keys come from node:crypto (native, ~100x faster than forge's JS keygen); forge only builds the certs.
async function newRsaKey(): Promise<{ publicKey: string; privateKey: string }> {
  return generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

function validity(now = new Date(), days: number): { notBefore: Date; notAfter: Date } {
  const notBefore = new Date(now.getTime() - CLOCK_SKEW_MS);
  return { notBefore, notAfter: new Date(notBefore.getTime() + days * DAY_MS) };
}

function signCert(p: {
  publicKeyPem: string;
  signingKeyPem: string;
  subject: forge.pki.CertificateField[];
  issuer: forge.pki.CertificateField[];
  notBefore: Date;
  notAfter: Date;
  extensions: object[];
}): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(p.publicKeyPem);
  cert.serialNumber = randomSerialHex();
  cert.validity.notBefore = p.notBefore;
  cert.validity.notAfter = p.notAfter;
  cert.setSubject(p.subject);
  cert.setIssuer(p.issuer);
  cert.setExtensions(p.extensions);
  cert.sign(forge.pki.privateKeyFromPem(p.signingKeyPem), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}
