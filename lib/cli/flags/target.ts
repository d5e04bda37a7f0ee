/** The Target section of --help: -m, -u, -i and what identifies the model and server. */
import { ENDPOINT_TYPE_NAMES } from "../../input/llm_endpoints.ts";
import type { OptionDef } from "../option_types.ts";

export const TARGET: readonly OptionDef[] = [
  {
    name: "model-name",
    short: "m",
    type: "string",
    group: "Target",
    valueName: "MODEL",
    help:
      "Name of the model to profile (required). With --service-kind openai, A,B names several models (AIPerf's): each request names one, chosen by --model-selection-strategy.",
  },
  {
    name: "model-selection-strategy",
    type: "string",
    default: "round_robin",
    group: "Target",
    choices: ["round_robin", "random"],
    help:
      "With several models (-m A,B, --service-kind openai): each request's model in turn, or drawn at random (seeded), as AIPerf's.",
  },
  {
    name: "model-version",
    short: "x",
    type: "string",
    group: "Target",
    valueName: "VERSION",
    help: "Version of the model. Default: the server's choice (latest).",
  },
  {
    name: "url",
    short: "u",
    type: "comma-list",
    group: "Target",
    valueName: "HOST:PORT",
    help:
      "Server address. Default: localhost:8000 for HTTP, localhost:8001 for gRPC. With --service-kind openai, several (-u A,B or -u A -u B, AIPerf's): the connections go to each in turn.",
  },
  {
    name: "protocol",
    short: "i",
    type: "string",
    default: "http",
    group: "Target",
    choices: ["http", "grpc"],
    ignoreCase: true,
    sweep: "list",
    help: "Protocol used to talk to the server.",
  },
  {
    name: "service-kind",
    perfAnalyzer: true,
    type: "string",
    default: "triton",
    group: "Target",
    choices: ["triton", "tfserving", "torchserve", "openai", "triton_c_api", "dynamic_grpc"],
    help:
      "Kind of server: triton (any KServe v2 server), tfserving (gRPC Predict; default -u localhost:8500), torchserve (HTTP /predictions/MODEL with the file --input-data names), openai (--endpoint; token metrics), triton_c_api (Triton's library in this process: --triton-server-directory, --model-repository; needs --allow-ffi). perf_analyzer's dynamic_grpc (any gRPC method, --grpc-method) is not supported.",
  },
  {
    name: "triton-server-directory",
    perfAnalyzer: true,
    type: "string",
    default: "/opt/tritonserver",
    group: "Target",
    valueName: "DIR",
    help:
      "Triton install of --service-kind triton_c_api: loads DIR/lib/libtritonserver.so, backends from DIR/backends.",
  },
  {
    name: "model-repository",
    perfAnalyzer: true,
    type: "string",
    group: "Target",
    valueName: "DIR",
    commands: ["profile", "demo", "serve"],
    help:
      "Model repository of the in-process server (--service-kind triton_c_api); with serve, the Triton model repository whose config.pbtxt files it simulates.",
  },
  {
    name: "endpoint",
    perfAnalyzer: true,
    type: "string",
    group: "Target",
    valueName: "PATH",
    help:
      "Path of --service-kind openai after the URL of -u (v1/chat/completions, v1/completions, v1/embeddings, v1/ranking, rerank, v1/responses, v1/messages, generate, generate_stream, v2/models/M/generate[_stream]); default: the path of --endpoint-type.",
  },
  {
    name: "endpoint-type",
    type: "string",
    group: "Target",
    choices: ENDPOINT_TYPE_NAMES,
    help:
      "The API of --service-kind openai (AIPerf's option): OpenAI's chat, completions, embeddings, rankings (NIM), responses; rerank (TEI), messages (Anthropic), triton_generate, huggingface_generate (TGI: generate, generate_stream with --streaming), sglang_generate (SGLang's /generate), template (any JSON API: --extra-inputs payload_template, response_field). Default: the API of --endpoint.",
  },
  {
    name: "model-signature-name",
    perfAnalyzer: true,
    type: "string",
    default: "serving_default",
    group: "Target",
    help: "Signature of the TF Serving model to call (--service-kind tfserving).",
  },
  {
    name: "bls-composing-models",
    perfAnalyzer: true,
    type: "list",
    structured: true,
    group: "Target",
    valueName: "A[:VER],B",
    help:
      "Composing models of a BLS model whose server statistics are reported too. Repeatable. In a model config search (Model Analyzer's bls_composing_models, also with each one's model_config_parameters), they are searched with the BLS model.",
  },
  {
    name: "grpc-method",
    perfAnalyzer: true,
    type: "string",
    group: "Target",
    valueName: "PKG.SERVICE/METHOD",
    help:
      "The method of perf_analyzer's --service-kind dynamic_grpc, which inferperf does not support.",
  },
];
