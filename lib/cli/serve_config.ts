/** inferperf serve: its options, checked. */
import { UsageError } from "../types/errors.ts";
import type { RawOptions } from "./options.ts";
import { Reader } from "./_reader.ts";
import type { EngineSettings } from "../server/engine.ts";

export interface ServeConfig {
  models?: string;
  /** --model-repository: a Triton model repository simulated. */
  modelRepository?: string;
  modelControlMode: "none" | "explicit";
  loadModels: string[];
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
  /** --llm-slots and the engine's other flags: the tunable LLM engine. */
  engine?: EngineSettings;
}

export function buildServeConfig(raw: RawOptions): ServeConfig {
  const r = new Reader(raw);
  const port = (name: string) =>
    r.bounded(name, (n) => n >= 0 && n <= 65535, "a port from 0 to 65535");
  const config = {
    models: r.string("models"),
    modelRepository: r.string("model-repository"),
    modelControlMode: r.string("model-control-mode") as "none" | "explicit",
    loadModels: r.list("load-model"),
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
  if (config.loadModels.length > 0 && config.modelControlMode !== "explicit") {
    r.errors.push("Option --load-model needs --model-control-mode explicit");
  }
  const engine = r.has("llm-slots") ? engineSettings(r) : undefined;
  if (r.errors.length > 0) throw new UsageError(r.errors);
  const { tfservingPort, ...rest } = config;
  return {
    ...rest,
    ...(tfservingPort === -1 ? {} : { tfservingPort }),
    ...(engine ? { engine } : {}),
  };
}

function engineSettings(r: Reader): EngineSettings {
  const positive = (name: string, integer: boolean) =>
    r.bounded(
      name,
      (n) => n > 0 && (!integer || Number.isInteger(n)),
      integer ? "an integer >= 1" : "a number > 0",
    );
  return {
    slots: positive("llm-slots", true),
    ctxSize: positive("llm-ctx-size", true),
    prefillMsPerToken: r.bounded("llm-prefill-ms-per-token", (n) => n >= 0, "a number >= 0"),
    stepMs: positive("llm-step-ms", false),
    stepMsPerSlot: r.bounded("llm-step-ms-per-slot", (n) => n >= 0, "a number >= 0"),
    outputTokens: positive("llm-output-tokens", true),
  };
}
