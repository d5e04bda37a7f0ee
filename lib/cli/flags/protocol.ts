/** The Protocol and TLS section of --help: gRPC, HTTP, TLS, headers and request parameters. */
import { TRACE_LEVELS } from "../../protocol/trace.ts";
import type { OptionDef } from "../option_types.ts";

export const PROTOCOL: readonly OptionDef[] = [
  {
    name: "header",
    short: "H",
    type: "list",
    group: "Protocol and TLS",
    valueName: "NAME:VALUE",
    help: "Extra header sent with every request (gRPC metadata too). Repeatable.",
  },
  {
    name: "grpc-compression-algorithm",
    type: "string",
    default: "none",
    group: "Protocol and TLS",
    choices: ["none", "gzip", "deflate"],
    help: "Compression of gRPC request messages (done once per request, before the run).",
  },
  {
    name: "ssl-grpc-use-ssl",
    type: "boolean",
    group: "Protocol and TLS",
    help: "Use TLS for gRPC (trusting the system's root certificates unless given).",
  },
  {
    name: "ssl-grpc-root-certifications-file",
    type: "string",
    group: "Protocol and TLS",
    help: "CA certificates (PEM) that sign the gRPC server's certificate.",
  },
  {
    name: "ssl-grpc-private-key-file",
    type: "string",
    group: "Protocol and TLS",
    help: "Client private key (PEM) for mutual TLS over gRPC.",
  },
  {
    name: "ssl-grpc-certificate-chain-file",
    type: "string",
    group: "Protocol and TLS",
    help: "Client certificate chain (PEM) for mutual TLS over gRPC.",
  },
  {
    name: "ssl-https-verify-peer",
    type: "int",
    default: 1,
    group: "Protocol and TLS",
    help:
      "Verify the server certificate: 1 only (Deno always verifies; see --ssl-https-ca-certificates-file).",
  },
  {
    name: "ssl-https-verify-host",
    type: "int",
    default: 2,
    group: "Protocol and TLS",
    help: "Verify the server host name: 0 no, 1 or 2 yes.",
  },
  {
    name: "ssl-https-ca-certificates-file",
    type: "string",
    group: "Protocol and TLS",
    help: "CA certificates (PEM) that sign the HTTPS server's certificate.",
  },
  {
    name: "ssl-https-client-certificate-file",
    type: "string",
    group: "Protocol and TLS",
    help: "Client certificate for mutual TLS over HTTPS.",
  },
  {
    name: "ssl-https-client-certificate-type",
    type: "string",
    default: "PEM",
    group: "Protocol and TLS",
    choices: ["PEM", "DER"],
    help: "Format of the client certificate file.",
  },
  {
    name: "ssl-https-private-key-file",
    type: "string",
    group: "Protocol and TLS",
    help: "Client private key for mutual TLS over HTTPS.",
  },
  {
    name: "ssl-https-private-key-type",
    type: "string",
    default: "PEM",
    group: "Protocol and TLS",
    choices: ["PEM", "DER"],
    help: "Format of the client private key file.",
  },
  {
    name: "trace-level",
    type: "list",
    group: "Protocol and TLS",
    choices: TRACE_LEVELS,
    help:
      "Server trace level, repeatable. The --trace-* options and --log-frequency update the server's global trace settings (Triton's trace extension) before profiling.",
  },
  {
    name: "trace-rate",
    type: "int",
    group: "Protocol and TLS",
    help: "Server trace rate: one request in N is traced.",
  },
  {
    name: "trace-count",
    type: "int",
    group: "Protocol and TLS",
    help: "Server trace count: how many more requests to trace (-1: no limit).",
  },
  {
    name: "log-frequency",
    type: "int",
    group: "Protocol and TLS",
    help: "Server trace log frequency: the server writes its traces every N traces (0: at exit).",
  },
];
