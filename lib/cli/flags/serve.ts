/** The Reference server section of --help: inferperf serve: the reference server's addresses and models. */
import type { OptionDef } from "../option_types.ts";

export const SERVE: readonly OptionDef[] = [
  {
    name: "models",
    type: "string",
    group: "Reference server (inferperf serve)",
    valueName: "FILE.yaml",
    commands: ["serve"],
    help: "Simulated models to serve (YAML or JSON). Default: the built-in models.",
  },
  {
    name: "host",
    type: "string",
    default: "127.0.0.1",
    group: "Reference server (inferperf serve)",
    commands: ["serve"],
    help: "Address to listen on.",
  },
  {
    name: "http-port",
    type: "int",
    default: 8000,
    group: "Reference server (inferperf serve)",
    commands: ["serve"],
    help:
      "Port of the HTTP endpoint: KServe v2, TorchServe (/predictions) and the OpenAI API (/v1).",
  },
  {
    name: "metrics-port",
    type: "int",
    default: 8002,
    group: "Reference server (inferperf serve)",
    commands: ["serve"],
    help: "Port of the Prometheus metrics endpoint.",
  },
  {
    name: "grpc-port",
    type: "int",
    default: 8001,
    group: "Reference server (inferperf serve)",
    commands: ["serve"],
    help: "Port of the gRPC endpoint: KServe v2 and TF Serving's PredictionService.",
  },
  {
    name: "tfserving-port",
    type: "int",
    default: 8500,
    group: "Reference server (inferperf serve)",
    commands: ["serve"],
    help:
      "A second gRPC port, TF Serving's default, for --service-kind tfserving without -u (-1: none).",
  },
  {
    name: "grpc-certificate-file",
    type: "string",
    group: "Reference server (inferperf serve)",
    valueName: "FILE.pem",
    commands: ["serve"],
    help: "Serve gRPC over TLS with this certificate chain (needs --grpc-private-key-file).",
  },
  {
    name: "grpc-private-key-file",
    type: "string",
    group: "Reference server (inferperf serve)",
    valueName: "FILE.pem",
    commands: ["serve"],
    help: "Private key of --grpc-certificate-file.",
  },
  {
    name: "grpc-client-ca-file",
    type: "string",
    group: "Reference server (inferperf serve)",
    valueName: "FILE.pem",
    commands: ["serve"],
    help: "Require gRPC clients to present a certificate signed by these CAs (mutual TLS).",
  },
  {
    name: "model-control-mode",
    type: "string",
    default: "none",
    choices: ["none", "explicit"],
    group: "Reference server (inferperf serve)",
    commands: ["serve"],
    help:
      "As Triton's: none loads every model at start; explicit loads them by the repository API (POST /v2/repository/models/NAME/load, with a config override).",
  },
  {
    name: "load-model",
    type: "list",
    group: "Reference server (inferperf serve)",
    valueName: "NAME",
    commands: ["serve"],
    help:
      "With --model-control-mode explicit: a model of --model-repository loaded at start (* for all).",
  },
  engineFlag(
    "llm-slots",
    "int",
    undefined,
    "N",
    "Serve the tunable LLM engine, the model `engine`: N answers decode at once, more wait in a queue (its /metrics on the HTTP port, in vLLM's names).",
  ),
  engineFlag(
    "llm-ctx-size",
    "int",
    8192,
    "TOKENS",
    "The engine's context, shared by its slots: it refuses to start when a slot's share is under 512 tokens.",
  ),
  engineFlag(
    "llm-prefill-ms-per-token",
    "float",
    0.05,
    "MS",
    "The engine's prefill time per prompt token, before an answer's first decode step.",
  ),
  engineFlag(
    "llm-step-ms",
    "float",
    10,
    "MS",
    "The engine's decode step (one token of every busy slot) with one slot.",
  ),
  engineFlag(
    "llm-step-ms-per-slot",
    "float",
    2,
    "MS",
    "What each further slot adds to a decode step, busy or not (a batch padded to its slots).",
  ),
  engineFlag(
    "llm-output-tokens",
    "int",
    32,
    "N",
    "The engine's answer length, unless a request's max_tokens asks for fewer.",
  ),
];

function engineFlag(
  name: string,
  type: "int" | "float",
  fallback: number | undefined,
  valueName: string,
  help: string,
): OptionDef {
  return {
    name,
    type,
    ...(fallback === undefined ? {} : { default: fallback }),
    group: "Reference server (inferperf serve)",
    valueName,
    commands: ["serve"],
    help,
  };
}
