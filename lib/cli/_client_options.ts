/**
 * The client options: -i, headers, TLS, request parameters, --service-kind
 * and what goes with each (see the Target and Protocol and TLS sections).
 */
import type { MediaOptions } from "../input/media.ts";
import type { InputPlan } from "../input/plan.ts";
import { isBuiltInTokenizer, TOKENIZER_NAMES } from "../input/tokenizer.ts";
import type { TokenPlan } from "../measure/plan.ts";
import { parseGoodput } from "../measure/tokens.ts";
import type { LoadPlan } from "../load/plan.ts";
import type {
  ClientPlan,
  GrpcSslConfig,
  HttpsSslConfig,
  RequestParameter,
} from "../protocol/plan.ts";
import type { ParameterValue } from "../types/tensor.ts";
import type { RawOptions } from "./options.ts";
import type { Reader } from "./_reader.ts";
import { parseWorkload, WORKLOAD_OPTIONS } from "./_workload_options.ts";
import { type ExtraInputs, parseEndpoint, parseExtraInputs } from "./_endpoint_options.ts";

/** Parameters Triton or the protocol itself set; a custom parameter may not take them. */
const RESERVED_PARAMETERS = new Set([
  "sequence_id",
  "sequence_start",
  "sequence_end",
  "priority",
  "timeout",
  "headers",
  "binary_data",
  "binary_data_output",
  "binary_data_size",
  "shared_memory_region",
  "shared_memory_offset",
  "shared_memory_byte_size",
]);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

function integerValue(value: bigint, type: "int64" | "uint64"): ParameterValue {
  const safe = value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER);
  if (type === "int64") return safe ? Number(value) : { type, value };
  return { type, value: safe ? Number(value) : value };
}

/** NAME:VALUE:TYPE; VALUE may itself contain colons. */
function parseRequestParameter(item: string): RequestParameter | string {
  const first = item.indexOf(":");
  const last = item.lastIndexOf(":");
  const invalid = (why: string) => `Invalid value "${item}" for --request-parameter: ${why}`;
  if (first <= 0 || last === first) return invalid("expected NAME:VALUE:TYPE");
  const name = item.slice(0, first).trim();
  const text = item.slice(first + 1, last).trim();
  // perf_analyzer matches the type in lower case ("INT" is int).
  const type = item.slice(last + 1).trim().toLowerCase();
  if (RESERVED_PARAMETERS.has(name) || name.startsWith("triton_")) {
    return invalid(
      `"${name}" is a reserved parameter (set by inferperf or the server: ${
        [...RESERVED_PARAMETERS].slice(0, 5).join(", ")
      }, ..., and names starting with "triton_")`,
    );
  }
  switch (type) {
    case "int":
    case "uint": {
      const unsigned = type === "uint";
      const value = /^[+-]?\d+$/.test(text) ? BigInt(text) : undefined;
      const [min, max] = unsigned ? [0n, UINT64_MAX] : [INT64_MIN, INT64_MAX];
      if (value === undefined || value < min || value > max) {
        return invalid(`expected ${unsigned ? "an unsigned" : "a signed"} 64-bit integer`);
      }
      return { name, value: integerValue(value, unsigned ? "uint64" : "int64") };
    }
    case "bool": {
      const lower = text.toLowerCase();
      if (!["true", "false", "1", "0"].includes(lower)) return invalid("expected true or false");
      return { name, value: lower === "true" || lower === "1" };
    }
    case "string":
      return { name, value: text };
    case "double": {
      const value = Number(text);
      if (text === "" || !Number.isFinite(value)) return invalid("expected a number");
      return { name, value: { type: "double", value } };
    }
    default:
      return invalid(`unknown TYPE "${type}": expected int, uint, bool, string or double`);
  }
}

const GRPC_SSL_FILES = [
  "ssl-grpc-root-certifications-file",
  "ssl-grpc-private-key-file",
  "ssl-grpc-certificate-chain-file",
];
const HTTPS_SSL_OPTIONS = [
  "ssl-https-verify-peer",
  "ssl-https-verify-host",
  "ssl-https-ca-certificates-file",
  "ssl-https-client-certificate-file",
  "ssl-https-client-certificate-type",
  "ssl-https-private-key-file",
  "ssl-https-private-key-type",
];

/** gRPC, TLS and request-parameter options, and --periodic-concurrency-range. */
type ProtocolOptions =
  & Pick<ClientPlan, "streaming" | "grpcCompression" | "requestParameters" | "grpcSsl" | "httpsSsl">
  & Pick<LoadPlan, "periodic">;

export function parseProtocol(
  r: Reader,
  options: { raw: RawOptions; protocol: "http" | "grpc"; url: string; serviceKind: string },
): ProtocolOptions {
  const { raw, protocol } = options;
  const errors = r.errors;
  const given = (names: string[]) => names.filter((n) => raw.has(n)).map((n) => `--${n}`);
  const grpc = protocol === "grpc";
  const streaming = r.flag("streaming");
  // OpenAI-compatible servers stream over HTTP (server-sent events); the C API always streams.
  const streams = options.serviceKind === "openai" || options.serviceKind === "triton_c_api";
  if (streaming && !grpc && !streams) {
    errors.push("Option --streaming needs -i grpc (HTTP has no streams)");
  }
  if (raw.has("grpc-compression-algorithm") && !grpc) {
    errors.push("Option --grpc-compression-algorithm needs -i grpc");
  }
  const requestParameters: RequestParameter[] = [];
  for (const item of r.list("request-parameter")) {
    const parsed = parseRequestParameter(item);
    if (typeof parsed === "string") errors.push(parsed);
    else requestParameters.push(parsed);
  }

  let periodic: LoadPlan["periodic"];
  if (raw.has("periodic-concurrency-range")) {
    const range = r.range("periodic-concurrency-range", "1");
    const requestPeriod = r.bounded("request-period", (n) => n >= 1, "an integer >= 1");
    periodic = { range, requestPeriod };
    const others = given([
      "concurrency-range",
      "concurrent-requests",
      "max-concurrency",
      "dynamic-concurrency",
      "request-rate-range",
      "request-intervals",
      "fixed-schedule",
      "session-concurrency",
    ]);
    if (others.length > 0) {
      errors.push(
        `Option --periodic-concurrency-range can not be used with ${others.join(", ")}: ` +
          "each chooses a load mode",
      );
    }
    const missing = [
      ...(grpc ? [] : ["-i grpc"]),
      ...(streaming ? [] : ["--streaming"]),
      ...(raw.has("profile-export-file") ? [] : ["--profile-export-file"]),
    ];
    if (missing.length > 0) {
      errors.push(
        `Option --periodic-concurrency-range needs ${missing.join(" and ")}: its requests ` +
          "stream responses from a decoupled model over gRPC, and, as in perf_analyzer, its " +
          "results are the exported requests",
      );
    }
    if (range.start < 1 || range.end < range.start) {
      errors.push(
        `Invalid value "${raw.get("periodic-concurrency-range")}" for ` +
          "--periodic-concurrency-range: expected 1 <= START <= END",
      );
    } else if ((range.end - range.start) % range.step !== 0) {
      errors.push(
        `Invalid value "${raw.get("periodic-concurrency-range")}" for ` +
          "--periodic-concurrency-range: END - START must be a multiple of STEP",
      );
    }
  } else if (raw.has("request-period")) {
    r.ignored("Option --request-period applies to --periodic-concurrency-range only");
  }

  let grpcSsl: GrpcSslConfig | undefined;
  const grpcFiles = given(GRPC_SSL_FILES);
  if (!grpc && (raw.has("ssl-grpc-use-ssl") || grpcFiles.length > 0)) {
    r.ignored("Options --ssl-grpc-* apply to -i grpc only (for HTTPS use --ssl-https-*)");
  } else if (r.flag("ssl-grpc-use-ssl")) {
    grpcSsl = {
      rootCertificatesFile: r.string("ssl-grpc-root-certifications-file"),
      privateKeyFile: r.string("ssl-grpc-private-key-file"),
      certificateChainFile: r.string("ssl-grpc-certificate-chain-file"),
    };
    if ((grpcSsl.privateKeyFile === undefined) !== (grpcSsl.certificateChainFile === undefined)) {
      errors.push(
        "Options --ssl-grpc-private-key-file and --ssl-grpc-certificate-chain-file go together " +
          "(the client certificate and its key)",
      );
    }
  } else if (grpcFiles.length > 0) {
    r.ignored(`Options ${grpcFiles.join(", ")} apply with --ssl-grpc-use-ssl only`);
  }

  const httpsGiven = given(HTTPS_SSL_OPTIONS);
  if (httpsGiven.length > 0 && (grpc || !/^\s*https:\/\//i.test(options.url))) {
    r.ignored(
      `Options ${httpsGiven.join(", ")} apply to -i http with an https:// URL in -u only` +
        (grpc ? " (for gRPC use --ssl-grpc-*)" : ""),
    );
  }
  const verifyPeer = r.bounded("ssl-https-verify-peer", (n) => n === 0 || n === 1, "0 or 1");
  const verifyHost = r.bounded(
    "ssl-https-verify-host",
    (n) => n === 0 || n === 1 || n === 2,
    "0, 1 or 2",
  );
  const httpsSsl: HttpsSslConfig = {
    verifyPeer: verifyPeer !== 0,
    verifyHost: verifyHost !== 0,
    caCertificatesFile: r.string("ssl-https-ca-certificates-file"),
    clientCertificateFile: r.string("ssl-https-client-certificate-file"),
    clientCertificateType: r.string("ssl-https-client-certificate-type") as "PEM" | "DER",
    privateKeyFile: r.string("ssl-https-private-key-file"),
    privateKeyType: r.string("ssl-https-private-key-type") as "PEM" | "DER",
  };
  if ((httpsSsl.clientCertificateFile === undefined) !== (httpsSsl.privateKeyFile === undefined)) {
    errors.push(
      "Options --ssl-https-client-certificate-file and --ssl-https-private-key-file go together",
    );
  }
  return {
    streaming,
    grpcCompression: r.string("grpc-compression-algorithm") as ClientPlan["grpcCompression"],
    requestParameters,
    periodic,
    grpcSsl,
    httpsSsl,
  };
}

/** Options that only reach a server over the network, which triton_c_api does not use. */
const NETWORK_OPTIONS = [
  "url",
  "protocol",
  "header",
  "grpc-compression-algorithm",
  "ssl-grpc-use-ssl",
  ...GRPC_SSL_FILES,
  ...HTTPS_SSL_OPTIONS,
  "input-tensor-format",
  "output-tensor-format",
];
const C_API_OPTIONS: ReadonlyArray<[string, string]> = [
  ["triton-server-directory", "DIR (a Triton install: DIR/lib/libtritonserver.so)"],
  ["model-repository", "DIR (the model repository the in-process server loads)"],
];

/**
 * --service-kind triton_c_api needs the Triton install and the model
 * repository of the in-process server; the network options do nothing with
 * it, nor do its options with other kinds (warnings: perf_analyzer accepts them).
 */
function checkCApiOptions(r: Reader, kind: string): void {
  const given = (names: string[]) => names.filter((name) => r.has(name)).map((n) => `--${n}`);
  const own = C_API_OPTIONS.map(([name]) => name);
  if (kind !== "triton_c_api") {
    if (given(own).length > 0) {
      r.ignored(`Options ${given(own).join(", ")} apply to --service-kind triton_c_api only`);
    }
    return;
  }
  // --triton-server-directory has perf_analyzer's default, /opt/tritonserver.
  for (const [name, what] of C_API_OPTIONS) {
    if (r.string(name) === undefined) {
      r.errors.push(`--service-kind triton_c_api needs --${name} ${what}`);
    }
  }
  const network = given(NETWORK_OPTIONS);
  if (network.length > 0) {
    r.ignored(
      `Options ${network.join(", ")} do not apply to --service-kind triton_c_api (requests ` +
        "go to the in-process server, not over a network)",
    );
  }
}

/** perf_analyzer's default -u of --service-kind tfserving (TF Serving's gRPC port). */
export const TFSERVING_URL = "localhost:8500";

/** Options that only --service-kind openai takes. */
const LLM_OPTIONS = [
  "synthetic-input-tokens-mean",
  "synthetic-input-tokens-stddev",
  "output-tokens-mean",
  "output-tokens-stddev",
  "output-tokens-mean-deterministic",
  "num-prompts",
  "input-file",
  "random-seed",
  "tokenizer",
  "apply-chat-template",
  "goodput",
  "slice-duration",
  "endpoint-type",
  "extra-inputs",
  ...WORKLOAD_OPTIONS,
];

/** --service-kind and the options that go with it. */
type ServiceOptions =
  & Pick<
    ClientPlan,
    | "serviceKind"
    | "tritonServerDirectory"
    | "modelRepository"
    | "endpoint"
    | "endpointType"
    | "templateFields"
    | "modelSignatureName"
    | "sharedMemory"
    | "outputSharedMemorySize"
  >
  & Pick<InputPlan, "syntheticPrompts" | "tokenizer" | "applyChatTemplate">
  & TokenPlan;

export function parseService(
  r: Reader,
  raw: RawOptions,
): ServiceOptions & { protocol: "http" | "grpc" } {
  const errors = r.errors;
  const kind = r.string("service-kind")!;
  let protocol = r.string("protocol") as "http" | "grpc";
  checkCApiOptions(r, kind);
  if (kind === "tfserving") {
    if (raw.has("protocol") && protocol !== "grpc") {
      errors.push("--service-kind tfserving needs -i grpc (TF Serving's Predict API is gRPC)");
    }
    protocol = "grpc";
  } else if ((kind === "torchserve" || kind === "openai") && protocol !== "http") {
    errors.push(`--service-kind ${kind} needs -i http`);
  }
  let llm: ReturnType<typeof parseEndpoint> & ExtraInputs | undefined;
  if (kind === "openai") {
    const api = parseEndpoint(r, {
      model: r.string("model-name") ?? "",
      streaming: r.flag("streaming"),
    });
    llm = { ...api, ...parseExtraInputs(r, api.endpointType) };
  } else if (raw.has("endpoint")) {
    r.ignored("Option --endpoint applies to --service-kind openai only");
  }
  const endpoint = llm?.endpoint ?? "";
  const endpointType = llm?.endpointType;
  if (endpointType !== undefined && endpointType !== "chat" && raw.has("session-concurrency")) {
    // A session's next turn carries the history with the answer's assistant message, read as chat's.
    errors.push(
      `Option --session-concurrency needs --endpoint-type chat (its turns carry the chat history), ` +
        `not ${endpointType}`,
    );
  }
  if (raw.has("model-signature-name") && kind !== "tfserving") {
    r.ignored("Option --model-signature-name applies to --service-kind tfserving only");
  }
  const llmGiven = LLM_OPTIONS.filter((n) => raw.has(n));
  if (llmGiven.length > 0 && kind !== "openai") {
    errors.push(
      `Options ${llmGiven.map((n) => `--${n}`).join(", ")} apply to --service-kind openai only`,
    );
  }
  if (kind === "dynamic_grpc" || raw.has("grpc-method")) {
    errors.push(
      "perf_analyzer's --service-kind dynamic_grpc and --grpc-method are not supported: their " +
        "input data names commands to run (message_generator), and inferperf starts no " +
        "programs; for KServe v2 servers use --service-kind triton -i grpc, for TF Serving " +
        "tfserving",
    );
  }
  const sharedMemory = r.string("shared-memory");
  if (sharedMemory === "cuda") {
    errors.push(
      'Value "cuda" of --shared-memory needs CUDA (an NVIDIA GPU and its driver, with the server ' +
        "on the same machine), which inferperf does not use: use --shared-memory system",
    );
  } else if (sharedMemory === "system" && kind !== "triton" && kind !== "triton_c_api") {
    errors.push(
      "--shared-memory system needs --service-kind triton or triton_c_api (shared memory is a " +
        "Triton extension)",
    );
  }
  const outputTokens = raw.has("output-tokens-mean")
    ? {
      mean: r.bounded("output-tokens-mean", (n) => n >= 1, "an integer >= 1"),
      stddev: r.bounded("output-tokens-stddev", (n) => n >= 0, "an integer >= 0"),
      deterministic: r.flag("output-tokens-mean-deterministic"),
    }
    : undefined;
  // A length mix or a file's lengths (a trace, ShareGPT) may be made exact without a mean.
  const lengthsGiven = raw.has("sequence-distribution") ||
    ["mooncake_trace", "burstgpt_trace", "azure_trace", "sharegpt"].includes(
      String(raw.get("custom-dataset-type") ?? raw.get("public-dataset")),
    );
  const exactLengths = outputTokens === undefined && lengthsGiven &&
    r.flag("output-tokens-mean-deterministic");
  for (const name of ["output-tokens-stddev", "output-tokens-mean-deterministic"]) {
    if (raw.has(name) && outputTokens === undefined && !exactLengths) {
      errors.push(
        `Option --${name} needs --output-tokens-mean` +
          (name === "output-tokens-stddev"
            ? ""
            : " (or lengths of --sequence-distribution, a trace or ShareGPT)"),
      );
    }
  }
  let goodput: TokenPlan["goodput"] = [];
  try {
    goodput = parseGoodput(r.list("goodput"));
  } catch (error) {
    errors.push((error as Error).message);
  }
  const inputFile = r.string("input-file");
  return {
    protocol,
    serviceKind: kind,
    tritonServerDirectory: kind === "triton_c_api" ? r.string("triton-server-directory")! : "",
    modelRepository: r.string("model-repository") ?? "",
    endpoint,
    ...(endpointType === undefined ? {} : { endpointType }),
    ...(llm?.templateFields ? { templateFields: llm.templateFields } : {}),
    modelSignatureName: r.string("model-signature-name")!,
    sharedMemory: sharedMemory === "system" ? "system" : "none",
    outputSharedMemorySize: r.bounded(
      "output-shared-memory-size",
      (n) => n >= 0,
      "an integer >= 0",
    ),
    syntheticPrompts: {
      ...parseWorkload(r, raw),
      inputTokensMean: r.bounded("synthetic-input-tokens-mean", (n) => n >= 1, "an integer >= 1"),
      inputTokensStddev: r.bounded(
        "synthetic-input-tokens-stddev",
        (n) => n >= 0,
        "an integer >= 0",
      ),
      ...(outputTokens === undefined ? {} : { outputTokens }),
      ...(exactLengths ? { exactLengths } : {}),
      count: raw.has("conversation-num")
        ? r.bounded("conversation-num", (n) => n >= 1, "an integer >= 1")
        : r.bounded("num-prompts", (n) => n >= 1, "an integer >= 1"),
      streaming: r.flag("streaming"),
      seed: r.bounded("random-seed", (n) => n >= 0, "an integer >= 0"),
      ...(inputFile === undefined ? {} : { inputFile }),
      ...parseMedia(r, { chat: endpointType === "chat" }),
      ...(endpointType === "rankings" || endpointType === "rerank"
        ? { rankingsPassages: r.bounded("rankings-passages", (n) => n >= 1, "an integer >= 1") }
        : {}),
      ...(llm?.extraInputs ? { extraInputs: llm.extraInputs } : {}),
      ...(llm?.payloadTemplate === undefined ? {} : { payloadTemplate: llm.payloadTemplate }),
    },
    ...parseTokenizer(r, { endpointType }),
    goodput,
    sliceDurationMs: raw.has("slice-duration")
      ? r.bounded("slice-duration", (n) => n > 0, "a number of seconds > 0") * 1000
      : 0,
  };
}

/** The endpoint types whose requests carry chat messages, which servers render with the template. */
const CHAT_TYPES = ["chat", "messages"];

/**
 * --tokenizer (a built-in name, else a directory that the run reads) and
 * --apply-chat-template, which needs a directory (its template) and a chat
 * endpoint (the server renders templates of chat requests only).
 */
function parseTokenizer(
  r: Reader,
  options: { endpointType: string | undefined },
): Pick<InputPlan, "tokenizer" | "applyChatTemplate"> {
  const tokenizer = r.string("tokenizer")!;
  let directory = !isBuiltInTokenizer(tokenizer);
  if (directory) {
    try {
      directory = Deno.statSync(tokenizer).isDirectory;
    } catch {
      directory = false;
    }
    if (!directory) {
      r.errors.push(
        `Invalid value "${tokenizer}" for --tokenizer: expected one of ${
          TOKENIZER_NAMES.join(", ")
        } or a model directory (tokenizer.json, tokenizer_config.json)`,
      );
    }
  }
  const applyChatTemplate = r.flag("apply-chat-template");
  if (applyChatTemplate && isBuiltInTokenizer(tokenizer)) {
    r.errors.push(
      "--apply-chat-template needs --tokenizer DIR, a model directory with its chat template " +
        `(the built-in tokenizer "${tokenizer}" has none)`,
    );
  }
  if (applyChatTemplate && !CHAT_TYPES.includes(options.endpointType ?? "")) {
    r.errors.push(
      "--apply-chat-template needs a chat endpoint (--endpoint v1/chat/completions, " +
        "--endpoint-type chat or messages)",
    );
  }
  return { tokenizer, applyChatTemplate };
}

/** A comma-separated or repeated list of numbers, each passing `ok`. */
function numbers(r: Reader, name: string, ok: (n: number) => boolean, expected: string): number[] {
  const values = r.list(name).flatMap((item) => item.split(",")).map((s) => s.trim());
  const out: number[] = [];
  for (const text of values) {
    const n = Number(text);
    if (text === "" || !ok(n)) {
      r.errors.push(`Invalid value "${text}" for --${name}: expected ${expected}`);
    } else out.push(n);
  }
  return out;
}

/** AIPerf's --image-* and --audio-* options: media in each synthetic chat turn. */
function parseMedia(r: Reader, options: { chat: boolean }): { media?: MediaOptions } {
  const media: MediaOptions = {};
  const width = r.bounded("image-width-mean", (n) => n >= 0, "a number >= 0");
  const height = r.bounded("image-height-mean", (n) => n >= 0, "a number >= 0");
  if (width > 0 || height > 0) {
    media.image = {
      widthMean: width,
      widthStddev: r.bounded("image-width-stddev", (n) => n >= 0, "a number >= 0"),
      heightMean: height,
      heightStddev: r.bounded("image-height-stddev", (n) => n >= 0, "a number >= 0"),
      batchSize: r.bounded("image-batch-size", (n) => n >= 1, "an integer >= 1"),
      format: r.string("image-format") as "png" | "jpeg",
    };
  }
  const length = r.bounded("audio-length-mean", (n) => n >= 0, "a number of seconds >= 0");
  if (length > 0) {
    if (r.string("audio-format") === "mp3") {
      r.errors.push(
        "Option --audio-format mp3 is not supported: inferperf encodes WAV only (no MP3 encoder)",
      );
    }
    const depths = numbers(
      r,
      "audio-depths",
      (n) => [8, 16, 24, 32].includes(n),
      "8, 16, 24 or 32",
    );
    const rates = numbers(r, "audio-sample-rates", (n) => n > 0, "a rate in kHz > 0");
    media.audio = {
      lengthMean: length,
      lengthStddev: r.bounded("audio-length-stddev", (n) => n >= 0, "a number >= 0"),
      depths: depths.length > 0 ? depths : [16],
      sampleRatesKHz: rates.length > 0 ? rates : [16],
      channels: r.bounded("audio-num-channels", (n) => n === 1 || n === 2, "1 or 2"),
      batchSize: r.bounded("audio-batch-size", (n) => n >= 1, "an integer >= 1"),
    };
  }
  if (media.image === undefined && media.audio === undefined) return {};
  if (!options.chat) {
    r.errors.push(
      "Images and audio (--image-*, --audio-*) go in chat content parts: they need " +
        "--service-kind openai --endpoint v1/chat/completions",
    );
  }
  return { media };
}

export function parseHeaders(reader: Reader, list: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const item of list) {
    const colon = item.indexOf(":");
    const name = item.slice(0, colon).trim();
    if (colon <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      reader.errors.push(`Invalid value "${item}" for -H/--header: expected NAME:VALUE`);
      continue;
    }
    const value = item.slice(colon + 1).trim();
    // CR, LF or NUL would end the header line early and let the rest inject headers or requests.
    if (/[\r\n\0]/.test(value)) {
      reader.errors.push(
        `Invalid value ${JSON.stringify(item)} for -H/--header: the value holds CR, LF or NUL`,
      );
      continue;
    }
    headers[name] = value;
  }
  return headers;
}
