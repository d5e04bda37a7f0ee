/**
 * Reads the certificate files named by --ssl-grpc-* and --ssl-https-* into
 * the TLS options of the protocol clients, converting DER files to PEM. A
 * client certificate and key the runtime's TLS library (rustls) cannot use
 * are refused here, naming the file: handed over as they are, they make the
 * runtime panic.
 */
import { UsageError } from "../types/errors.ts";
import type { GrpcSslConfig, HttpsSslConfig } from "./plan.ts";
import type { TlsOptions } from "./http1/mod.ts";

function read(path: string, option: string): Uint8Array {
  try {
    return Deno.readFileSync(path);
  } catch (error) {
    throw new UsageError([`Cannot read "${path}" given to ${option}: ${(error as Error).message}`]);
  }
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function pem(der: Uint8Array, label: string): string {
  let binary = "";
  for (const byte of der) binary += String.fromCharCode(byte);
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/**
 * The PEM label of a DER private key, told by its ASN.1 layout: PKCS#8
 * (version, then an AlgorithmIdentifier SEQUENCE), PKCS#1 RSA (version, then
 * the modulus INTEGER) or SEC1 EC (version 1, then an OCTET STRING).
 */
export function derKeyLabel(der: Uint8Array): string {
  if (der[0] !== 0x30 || der.length < 4) {
    throw new UsageError([
      "The private key file is not a DER key (it does not start with a SEQUENCE)",
    ]);
  }
  const header = der[1] < 0x80 ? 2 : 2 + (der[1] & 0x7f);
  const versionLength = der[header + 1];
  const next = der[header + 2 + versionLength];
  if (next === 0x30) return "PRIVATE KEY";
  if (next === 0x02) return "RSA PRIVATE KEY";
  if (next === 0x04) return "EC PRIVATE KEY";
  throw new UsageError(["The private key file is not a PKCS#8, PKCS#1 or SEC1 DER key"]);
}

/** TLS options of the gRPC client, or undefined without --ssl-grpc-use-ssl. */
export async function grpcTls(ssl: GrpcSslConfig | undefined): Promise<TlsOptions | undefined> {
  if (ssl === undefined) return undefined;
  const options: TlsOptions = {};
  if (ssl.rootCertificatesFile !== undefined) {
    options.caCerts = [text(read(ssl.rootCertificatesFile, "--ssl-grpc-root-certifications-file"))];
  }
  if (ssl.certificateChainFile !== undefined && ssl.privateKeyFile !== undefined) {
    const cert = {
      file: ssl.certificateChainFile,
      flag: "--ssl-grpc-certificate-chain-file",
      pem: text(read(ssl.certificateChainFile, "--ssl-grpc-certificate-chain-file")),
    };
    const key = {
      file: ssl.privateKeyFile,
      flag: "--ssl-grpc-private-key-file",
      pem: text(read(ssl.privateKeyFile, "--ssl-grpc-private-key-file")),
    };
    await checkClientIdentity(cert, key);
    options.cert = cert.pem;
    options.key = key.pem;
  }
  return options;
}

/** TLS options of the HTTPS client. */
export async function httpsTls(ssl: HttpsSslConfig): Promise<TlsOptions> {
  const options: TlsOptions = { verifyHostname: ssl.verifyHost, verifyPeer: ssl.verifyPeer };
  if (ssl.caCertificatesFile !== undefined) {
    options.caCerts = [text(read(ssl.caCertificatesFile, "--ssl-https-ca-certificates-file"))];
  }
  if (ssl.clientCertificateFile !== undefined && ssl.privateKeyFile !== undefined) {
    const certFlag = "--ssl-https-client-certificate-file";
    const keyFlag = "--ssl-https-private-key-file";
    const certBytes = read(ssl.clientCertificateFile, certFlag);
    const keyBytes = read(ssl.privateKeyFile, keyFlag);
    const cert = {
      file: ssl.clientCertificateFile,
      flag: certFlag,
      pem: ssl.clientCertificateType === "DER" ? pem(certBytes, "CERTIFICATE") : text(certBytes),
    };
    const key = {
      file: ssl.privateKeyFile,
      flag: keyFlag,
      pem: ssl.privateKeyType === "DER" ? pem(keyBytes, derKeyLabel(keyBytes)) : text(keyBytes),
    };
    await checkClientIdentity(cert, key);
    options.cert = cert.pem;
    options.key = key.pem;
  }
  return options;
}

/** A PEM file given to a flag. */
interface PemFile {
  file: string;
  flag: string;
  pem: string;
}

/** What the runtime's TLS library (rustls) signs with; other keys make it panic. */
const USABLE_KEYS = "RSA of 2048 bits or more, ECDSA P-256, P-384 or P-521, or Ed25519";
const USABLE_CURVES = new Set(["prime256v1", "secp384r1", "secp521r1"]);

/**
 * Refuses, in one line naming the file, a client certificate or key that the
 * runtime's TLS library cannot use: a certificate other than X.509 v3, an
 * encrypted key or one of another kind, a key that is not the certificate's.
 */
export async function checkClientIdentity(cert: PemFile, key: PemFile): Promise<void> {
  const where = (f: PemFile) => `"${f.file}" (${f.flag})`;
  const der = firstPemBlock(cert.pem, "CERTIFICATE");
  if (der === undefined) {
    throw new UsageError([
      `${where(cert)} holds no PEM certificate ("-----BEGIN CERTIFICATE-----")`,
    ]);
  }
  const version = certificateVersion(der);
  if (version === 0) throw new UsageError([`${where(cert)} is not a certificate`]);
  if (version !== 3) {
    throw new UsageError([
      `${where(cert)} is an X.509 v${version} certificate; the TLS library needs X.509 v3: ` +
      "sign it with extensions (openssl x509 -req ... -extfile with e.g. " +
      '"extendedKeyUsage=clientAuth")',
    ]);
  }
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(key.pem)) {
    throw new UsageError([
      `${where(key)} is encrypted; the TLS library needs it unencrypted ` +
      "(openssl pkey -in KEY -out PLAIN_KEY)",
    ]);
  }
  // Loaded for client certificates only: node:crypto parses every key format the runtime takes.
  const { createPrivateKey, createPublicKey, X509Certificate } = await import("node:crypto");
  let privateKey;
  let certificate;
  try {
    privateKey = createPrivateKey(key.pem);
  } catch (error) {
    throw new UsageError([`${where(key)} is not a private key: ${(error as Error).message}`]);
  }
  try {
    certificate = new X509Certificate(cert.pem);
  } catch (error) {
    throw new UsageError([`${where(cert)} is not a certificate: ${(error as Error).message}`]);
  }
  const type = privateKey.asymmetricKeyType ?? "unknown";
  const details = privateKey.asymmetricKeyDetails ?? {};
  const usable = type === "ed25519" ||
    (type === "rsa" && (details.modulusLength ?? 0) >= 2048) ||
    (type === "ec" && USABLE_CURVES.has(details.namedCurve ?? ""));
  if (!usable) {
    const kind = type === "rsa"
      ? `a ${details.modulusLength}-bit RSA`
      : type === "ec"
      ? `an EC ${details.namedCurve}`
      : `a ${type.toUpperCase()}`;
    throw new UsageError([
      `${where(key)} is ${kind} key; the TLS library signs with ${USABLE_KEYS}`,
    ]);
  }
  const spki = { type: "spki", format: "der" } as const;
  const mine = new Uint8Array(createPublicKey(privateKey).export(spki));
  const theirs = new Uint8Array(certificate.publicKey.export(spki));
  if (mine.length !== theirs.length || mine.some((byte, i) => byte !== theirs[i])) {
    throw new UsageError([`${where(key)} is not the key of the certificate ${where(cert)}`]);
  }
}

/** The DER bytes of the first PEM block labelled `label`. */
function firstPemBlock(pemText: string, label: string): Uint8Array | undefined {
  const match = new RegExp(`-----BEGIN ${label}-----([^-]*)-----END ${label}-----`).exec(pemText);
  if (!match) return undefined;
  try {
    return Uint8Array.from(atob(match[1].replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * The version (1 to 3) of a DER certificate: TBSCertificate's first field,
 * an optional explicit [0] INTEGER (0 for v1, absent meaning v1). 0 when the
 * bytes are not a certificate.
 */
export function certificateVersion(der: Uint8Array): number {
  const tbs = contentStart(der, 0);
  if (tbs === undefined) return 0;
  const first = contentStart(der, tbs);
  if (first === undefined) return 0;
  if (der[first] !== 0xa0) return 1;
  const integer = contentStart(der, first);
  if (integer === undefined || der[integer] !== 0x02 || der[integer + 1] !== 1) return 0;
  return der[integer + 2] + 1;
}

/** Offset of the content of the TLV at `at`, or undefined past the end. */
function contentStart(der: Uint8Array, at: number): number | undefined {
  if (at + 2 > der.length) return undefined;
  const first = der[at + 1];
  const start = first < 0x80 ? at + 2 : at + 2 + (first & 0x7f);
  return start < der.length ? start : undefined;
}
