/**
 * Reads the certificate files named by --ssl-grpc-* and --ssl-https-* into
 * the TLS options of the protocol clients, converting DER files to PEM.
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
export function grpcTls(ssl: GrpcSslConfig | undefined): TlsOptions | undefined {
  if (ssl === undefined) return undefined;
  const options: TlsOptions = {};
  if (ssl.rootCertificatesFile !== undefined) {
    options.caCerts = [text(read(ssl.rootCertificatesFile, "--ssl-grpc-root-certifications-file"))];
  }
  if (ssl.certificateChainFile !== undefined && ssl.privateKeyFile !== undefined) {
    options.cert = text(read(ssl.certificateChainFile, "--ssl-grpc-certificate-chain-file"));
    options.key = text(read(ssl.privateKeyFile, "--ssl-grpc-private-key-file"));
  }
  return options;
}

/** TLS options of the HTTPS client. */
export function httpsTls(ssl: HttpsSslConfig): TlsOptions {
  const options: TlsOptions = { verifyHostname: ssl.verifyHost };
  if (ssl.caCertificatesFile !== undefined) {
    options.caCerts = [text(read(ssl.caCertificatesFile, "--ssl-https-ca-certificates-file"))];
  }
  if (ssl.clientCertificateFile !== undefined && ssl.privateKeyFile !== undefined) {
    const cert = read(ssl.clientCertificateFile, "--ssl-https-client-certificate-file");
    const key = read(ssl.privateKeyFile, "--ssl-https-private-key-file");
    options.cert = ssl.clientCertificateType === "DER" ? pem(cert, "CERTIFICATE") : text(cert);
    options.key = ssl.privateKeyType === "DER" ? pem(key, derKeyLabel(key)) : text(key);
  }
  return options;
}
