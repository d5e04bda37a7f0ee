/** inferperf serve: its options, checked. */
import { UsageError } from "../types/errors.ts";
import type { RawOptions } from "./options.ts";
import { Reader } from "./_reader.ts";

export interface ServeConfig {
  models?: string;
  host: string;
  httpPort: number;
  metricsPort: number;
  grpcPort: number;
  /** --tfserving-port: a second gRPC port (TF Serving's 8500); undefined for -1 (none). */
  tfservingPort?: number;
  /** PEM files of the gRPC TLS certificate chain, its key and the CAs of client certificates. */
  grpcCertificateFile?: string;
  grpcPrivateKeyFile?: string;
  grpcClientCaFile?: string;
}

export function buildServeConfig(raw: RawOptions): ServeConfig {
  const r = new Reader(raw);
  const port = (name: string) =>
    r.bounded(name, (n) => n >= 0 && n <= 65535, "a port from 0 to 65535");
  const config = {
    models: r.string("models"),
    host: r.string("host")!,
    httpPort: port("http-port"),
    metricsPort: port("metrics-port"),
    grpcPort: port("grpc-port"),
    tfservingPort: r.bounded(
      "tfserving-port",
      (n) => n >= -1 && n <= 65535,
      "a port from 0 to 65535, or -1 for none",
    ),
    grpcCertificateFile: r.string("grpc-certificate-file"),
    grpcPrivateKeyFile: r.string("grpc-private-key-file"),
    grpcClientCaFile: r.string("grpc-client-ca-file"),
  };
  if ((config.grpcCertificateFile === undefined) !== (config.grpcPrivateKeyFile === undefined)) {
    r.errors.push("Options --grpc-certificate-file and --grpc-private-key-file go together");
  }
  if (config.grpcClientCaFile !== undefined && config.grpcCertificateFile === undefined) {
    r.errors.push("Option --grpc-client-ca-file needs --grpc-certificate-file (mutual TLS is TLS)");
  }
  if (r.errors.length > 0) throw new UsageError(r.errors);
  const { tfservingPort, ...rest } = config;
  return tfservingPort === -1 ? rest : { ...rest, tfservingPort };
}
