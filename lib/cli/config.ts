/**
 * argv -> typed configuration. Every problem is collected and reported at
 * once (k6 style), each naming the option and the value.
 */
import { tokenize, type TokenOptions } from "./_argv.ts";
import {
  type Command,
  optionDef,
  optionLabel,
  OPTIONS,
  type OptionType,
  PROFILE_COMMANDS,
} from "./options.ts";
import { type InputDataSpec, parseInputData } from "../input/input_data.ts";
import type { LoadMode, MeasurementOptions } from "../measure/types.ts";
import { MAX_SEQUENCE_ID } from "../load/sequences.ts";
import { parseRange, type Range } from "./range.ts";
import { defaultMetricsUrl, parseMetricsUrl } from "../measure/metrics_scraper.ts";
import { exportTargetProblem } from "../report/export_target.ts";
import type { ParameterValue } from "../protocol/types.ts";
import { OPENAI_ENDPOINTS, type SyntheticPrompts } from "../input/llm_data.ts";
import { checkCApiOnly, checkCApiOptions } from "./c_api_options.ts";

/** A configuration error; `errors` holds every problem found. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(readonly errors: string[]) {
    super(errors.join("\n"));
  }
}

export type RawValue = string | number | boolean | string[];
/** Values by long option name, as given (strings from argv, typed values from YAML). */
export type RawOptions = Map<string, RawValue>;

export interface ParsedArgs {
  command: Command;
  /** --help or --version was given: print that instead of running the command. */
  action?: "help" | "version";
  options: RawOptions;
}

/** Option types that may be given several times, their values collected in a list. */
const REPEATABLE: ReadonlySet<OptionType> = new Set(["list", "comma-list", "dict"]);
const COMMANDS: readonly string[] = ["profile", "serve", "demo", "report"] satisfies Command[];

const TOKEN_OPTIONS: TokenOptions = Object.fromEntries(
  OPTIONS.map((o) => [o.name, {
    type: o.type === "boolean" || o.type === "count" ? "boolean" as const : "string" as const,
    ...(o.short ? { short: o.short } : {}),
  }]),
);

/** Splits argv into a command and raw option values. */
export function parseArgv(argv: readonly string[]): ParsedArgs {
  const first = argv[0];
  const command = (first !== undefined && COMMANDS.includes(first) ? first : "profile") as Command;
  const args = command === first ? argv.slice(1) : argv;
  const tokens = tokenize(args, TOKEN_OPTIONS);
  const errors: string[] = [];
  const options: RawOptions = new Map();
  for (const token of tokens) {
    if (token.kind === "positional") {
      errors.push(`Unexpected argument "${token.value}"`);
      continue;
    }
    const def = OPTIONS.find((o) => o.name === token.name);
    if (!def) {
      errors.push(`Unknown option "${token.rawName}"`);
      continue;
    }
    if (!(def.commands ?? PROFILE_COMMANDS).includes(command)) {
      errors.push(`Option ${optionLabel(def.name)} does not apply to "inferperf ${command}"`);
      continue;
    }
    if (def.type === "boolean" || def.type === "count") {
      if (token.value !== undefined) {
        errors.push(`Option ${optionLabel(def.name)} takes no value, got "${token.value}"`);
      } else if (def.type === "count") {
        options.set(def.name, ((options.get(def.name) as number | undefined) ?? 0) + 1);
      } else options.set(def.name, true);
      continue;
    }
    if (token.value === undefined) {
      errors.push(`Option ${optionLabel(def.name)} needs a value`);
      continue;
    }
    if (REPEATABLE.has(def.type)) {
      const list = (options.get(def.name) as string[] | undefined) ?? [];
      list.push(token.value);
      options.set(def.name, list);
    } else options.set(def.name, token.value);
  }
  if (errors.length > 0) throw new UsageError(errors);
  if (options.get("help")) return { command, action: "help", options };
  if (options.get("version")) return { command, action: "version", options };
  return { command, options };
}

/** The command line's options on top of its --config file's, if one was given. */
export async function withConfigFile(parsed: ParsedArgs): Promise<RawOptions> {
  const cli = new Map(parsed.options);
  const path = cli.get("config");
  cli.delete("config");
  if (path === undefined) return cli;
  // The YAML parser loads only for a config file: about 20 ms of start-up from source.
  const { readConfigFile } = await import("./yaml.ts");
  const file = await readConfigFile(String(path), { command: parsed.command });
  return new Map([...file, ...cli]);
}

/** --sequence-* options: how requests of sequence models are grouped. */
export interface SequenceConfig {
  /** Live sequences an open-loop load cycles through (--num-of-sequences). */
  count: number;
  length: number;
  variationPct: number;
  idRange: { start: number; end: number };
  serial: boolean;
}

/** Which load runs over which levels, and how open-loop sends are bounded and judged. */
export interface LoadConfig {
  loadMode: LoadMode;
  /** --request-rate-range (floats); used when loadMode is "request_rate". */
  requestRate: Range;
  requestDistribution: "constant" | "poisson";
  /** --request-intervals file; loadMode is then "custom_intervals". */
  requestIntervals?: string;
  /**
   * --fixed-schedule: each input-data step is sent at its timestamp, as one
   * window; loadMode is then "custom_intervals" (a single open-loop level).
   */
  fixedSchedule: boolean;
  maxInflight: number;
  /** --workers: threads that drive the load (1: the main thread alone). */
  workers: number;
  maxSendLagMs: number;
  ignoreSendLag: boolean;
  sequences: SequenceConfig;
}

function parseSequenceIds(r: Reader): { start: number; end: number } {
  const text = r.string("sequence-id-range");
  if (text === undefined) return { start: 1, end: MAX_SEQUENCE_ID };
  const match = /^\s*(\d+)\s*(?::\s*(\d+)\s*)?$/.exec(text);
  const start = Number(match?.[1]);
  const end = match?.[2] === undefined ? MAX_SEQUENCE_ID : Number(match[2]);
  if (!match || start < 1 || end < start || end > MAX_SEQUENCE_ID) {
    r.errors.push(
      `Invalid value "${text}" for --sequence-id-range: expected START[:END] with ` +
        `1 <= START <= END <= ${MAX_SEQUENCE_ID}`,
    );
    return { start: 1, end: MAX_SEQUENCE_ID };
  }
  return { start, end };
}

function parseLoad(r: Reader, raw: RawOptions): LoadConfig {
  const fixedSchedule = r.flag("fixed-schedule");
  const modes = ["concurrency-range", "request-rate-range", "request-intervals"]
    .filter((name) => raw.has(name))
    .concat(fixedSchedule ? ["fixed-schedule"] : []);
  if (modes.length > 1) {
    r.errors.push(
      `Options ${modes.map((m) => `--${m}`).join(", ")} can not be used together: ` +
        "each chooses a load mode",
    );
  }
  const requestIntervals = r.string("request-intervals");
  return {
    loadMode: raw.has("request-rate-range")
      ? "request_rate"
      : requestIntervals !== undefined || fixedSchedule
      ? "custom_intervals"
      : "concurrency",
    requestRate: r.range("request-rate-range", "1", { integer: false }),
    requestDistribution: r.string("request-distribution") as "constant" | "poisson",
    requestIntervals,
    fixedSchedule,
    maxInflight: r.bounded("max-inflight", (n) => n >= 1, "an integer >= 1"),
    workers: r.bounded("workers", (n) => n >= 1, "an integer >= 1"),
    maxSendLagMs: r.bounded("max-send-lag", (n) => n > 0, "a number > 0"),
    ignoreSendLag: r.flag("ignore-send-lag"),
    sequences: {
      count: r.bounded("num-of-sequences", (n) => n >= 1, "an integer >= 1"),
      length: r.bounded("sequence-length", (n) => n >= 1, "an integer >= 1"),
      variationPct: r.bounded(
        "sequence-length-variation",
        (n) => n >= 0 && n <= 100,
        "a number from 0 to 100",
      ),
      idRange: parseSequenceIds(r),
      serial: r.flag("serial-sequences"),
    },
  };
}

/** A --request-parameter, its value typed as TYPE says. */
export interface RequestParameter {
  name: string;
  value: ParameterValue;
}

/** --ssl-grpc-* files (TLS is on when this is set). */
export interface GrpcSslConfig {
  rootCertificatesFile?: string;
  privateKeyFile?: string;
  certificateChainFile?: string;
}

/** --ssl-https-* settings, used with an https:// URL. */
export interface HttpsSslConfig {
  verifyHost: boolean;
  caCertificatesFile?: string;
  clientCertificateFile?: string;
  clientCertificateType: "PEM" | "DER";
  privateKeyFile?: string;
  privateKeyType: "PEM" | "DER";
}

/** gRPC, TLS and request-parameter options. */
export interface ProtocolConfig {
  streaming: boolean;
  grpcCompression: "none" | "gzip" | "deflate";
  requestParameters: RequestParameter[];
  /** --periodic-concurrency-range with --request-period (replaces the sweep). */
  periodic?: { range: Range; requestPeriod: number };
  grpcSsl?: GrpcSslConfig;
  httpsSsl: HttpsSslConfig;
}

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
  const type = item.slice(last + 1).trim();
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

function parseProtocol(
  r: Reader,
  options: { raw: RawOptions; protocol: "http" | "grpc"; url: string; serviceKind: string },
): ProtocolConfig {
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

  let periodic: ProtocolConfig["periodic"];
  if (raw.has("periodic-concurrency-range")) {
    const range = r.range("periodic-concurrency-range", "1");
    const requestPeriod = r.bounded("request-period", (n) => n >= 1, "an integer >= 1");
    periodic = { range, requestPeriod };
    const others = given([
      "concurrency-range",
      "request-rate-range",
      "request-intervals",
      "fixed-schedule",
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
    errors.push("Option --request-period applies to --periodic-concurrency-range only");
  }

  let grpcSsl: GrpcSslConfig | undefined;
  const grpcFiles = given(GRPC_SSL_FILES);
  if (!grpc && (raw.has("ssl-grpc-use-ssl") || grpcFiles.length > 0)) {
    errors.push("Options --ssl-grpc-* need -i grpc (for HTTPS use --ssl-https-*)");
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
    errors.push(`Options ${grpcFiles.join(", ")} need --ssl-grpc-use-ssl`);
  }

  const httpsGiven = given(HTTPS_SSL_OPTIONS);
  if (httpsGiven.length > 0 && (grpc || !/^\s*https:\/\//i.test(options.url))) {
    errors.push(
      `Options ${httpsGiven.join(", ")} need -i http and an https:// URL in -u` +
        (grpc ? " (for gRPC use --ssl-grpc-*)" : ""),
    );
  }
  const verifyPeer = r.number("ssl-https-verify-peer");
  if (verifyPeer === 0) {
    errors.push(
      "Value 0 of --ssl-https-verify-peer is not supported: Deno always verifies the server " +
        "certificate. Trust a private CA with --ssl-https-ca-certificates-file instead",
    );
  } else if (verifyPeer !== undefined && verifyPeer !== 1) {
    errors.push(`Invalid value "${verifyPeer}" for --ssl-https-verify-peer: expected 0 or 1`);
  }
  const verifyHost = r.bounded(
    "ssl-https-verify-host",
    (n) => n === 0 || n === 1 || n === 2,
    "0, 1 or 2",
  );
  const httpsSsl: HttpsSslConfig = {
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
    grpcCompression: r.string("grpc-compression-algorithm") as ProtocolConfig["grpcCompression"],
    requestParameters,
    periodic,
    grpcSsl,
    httpsSsl,
  };
}

/** Output files and server metrics beyond the console report and CSV. */
export interface ExportConfig {
  profileExportFile?: string;
  /** --overwrite: --profile-export-file may replace an existing file. */
  overwrite: boolean;
  collectMetrics: boolean;
  /** --metrics-url, else the host of -u on port 8002. */
  metricsUrl: string;
  metricsIntervalMs: number;
  reportHtml?: string;
  summaryJson?: string;
}

function parseExports(r: Reader, url: string): ExportConfig {
  const profileExportFile = r.string("profile-export-file");
  const overwrite = r.flag("overwrite");
  if (profileExportFile !== undefined) {
    const problem = exportTargetProblem(profileExportFile, overwrite);
    if (problem) r.errors.push(problem);
  }
  const collectMetrics = r.flag("collect-metrics");
  let metricsUrl = r.string("metrics-url") ?? "";
  try {
    if (metricsUrl !== "") parseMetricsUrl(metricsUrl);
    else if (collectMetrics) metricsUrl = defaultMetricsUrl(url);
  } catch (error) {
    r.errors.push((error as RangeError).message);
  }
  return {
    profileExportFile,
    overwrite,
    collectMetrics,
    metricsUrl,
    metricsIntervalMs: r.bounded("metrics-interval", (n) => n > 0, "an integer > 0"),
    reportHtml: r.string("report-html"),
    summaryJson: r.string("summary-json"),
  };
}

/** --service-kind and the options that go with it. */
export interface ServiceConfig {
  serviceKind: "triton" | "tfserving" | "torchserve" | "openai" | "triton_c_api";
  /** --triton-server-directory and --model-repository of triton_c_api; "" otherwise. */
  tritonServerDirectory: string;
  modelRepository: string;
  /** --endpoint of --service-kind openai; "" otherwise. */
  endpoint: string;
  /** --model-signature-name (tfserving). */
  modelSignatureName: string;
  /** --shared-memory ("cuda" is refused: it needs a GPU). */
  sharedMemory: "none" | "system";
  outputSharedMemorySize: number;
  /** --service-kind openai without payload files: the prompts to make up. */
  syntheticPrompts: SyntheticPrompts;
}

/** perf_analyzer's default -u of --service-kind tfserving (TF Serving's gRPC port). */
const TFSERVING_URL = "localhost:8500";

/** Options that only --service-kind openai takes. */
const LLM_OPTIONS = [
  "synthetic-input-tokens-mean",
  "synthetic-input-tokens-stddev",
  "output-tokens-mean",
  "num-prompts",
];

function parseService(
  r: Reader,
  raw: RawOptions,
): ServiceConfig & { protocol: "http" | "grpc" } {
  const errors = r.errors;
  const kind = r.string("service-kind")!;
  let protocol = r.string("protocol") as "http" | "grpc";
  if (kind === "triton_c_api") checkCApiOptions(r);
  else checkCApiOnly(r);
  if (kind === "tfserving") {
    if (raw.has("protocol") && protocol !== "grpc") {
      errors.push("--service-kind tfserving needs -i grpc (TF Serving's Predict API is gRPC)");
    }
    protocol = "grpc";
  } else if ((kind === "torchserve" || kind === "openai") && protocol !== "http") {
    errors.push(`--service-kind ${kind} needs -i http`);
  }
  const endpoint = (r.string("endpoint") ?? "").replace(/^\/+/, "");
  if (kind === "openai") {
    if (!(OPENAI_ENDPOINTS as readonly string[]).includes(endpoint)) {
      errors.push(
        raw.has("endpoint")
          ? `Invalid value "${raw.get("endpoint")}" for --endpoint: expected ${
            OPENAI_ENDPOINTS.join(" or ")
          }`
          : `--service-kind openai needs --endpoint (${OPENAI_ENDPOINTS.join(" or ")})`,
      );
    }
  } else if (raw.has("endpoint")) {
    errors.push("Option --endpoint applies to --service-kind openai only");
  }
  if (raw.has("model-signature-name") && kind !== "tfserving") {
    errors.push("Option --model-signature-name applies to --service-kind tfserving only");
  }
  const llmGiven = LLM_OPTIONS.filter((n) => raw.has(n));
  if (llmGiven.length > 0 && kind !== "openai") {
    errors.push(
      `Options ${llmGiven.map((n) => `--${n}`).join(", ")} apply to --service-kind openai only`,
    );
  }
  const sharedMemory = r.string("shared-memory");
  if (sharedMemory === "cuda") {
    errors.push(
      'Value "cuda" of --shared-memory needs CUDA (an NVIDIA GPU and its driver, with the server ' +
        "on the same machine), which inferperf does not use: use --shared-memory system",
    );
  } else if (sharedMemory === "system" && kind !== "triton") {
    errors.push(
      "--shared-memory system needs --service-kind triton (shared memory is a Triton extension)",
    );
  }
  const outputTokens = raw.has("output-tokens-mean")
    ? r.bounded("output-tokens-mean", (n) => n >= 1, "an integer >= 1")
    : undefined;
  return {
    protocol,
    serviceKind: kind as ServiceConfig["serviceKind"],
    tritonServerDirectory: r.string("triton-server-directory") ?? "",
    modelRepository: r.string("model-repository") ?? "",
    endpoint: kind === "openai" ? endpoint : "",
    modelSignatureName: r.string("model-signature-name")!,
    sharedMemory: sharedMemory === "system" ? "system" : "none",
    outputSharedMemorySize: r.bounded(
      "output-shared-memory-size",
      (n) => n >= 1,
      "an integer >= 1",
    ),
    syntheticPrompts: {
      inputTokensMean: r.bounded("synthetic-input-tokens-mean", (n) => n >= 1, "an integer >= 1"),
      inputTokensStddev: r.bounded(
        "synthetic-input-tokens-stddev",
        (n) => n >= 0,
        "an integer >= 0",
      ),
      ...(outputTokens === undefined ? {} : { outputTokens }),
      count: r.bounded("num-prompts", (n) => n >= 1, "an integer >= 1"),
      streaming: r.flag("streaming"),
    },
  };
}

/** --trace-level, --trace-rate, --trace-count and --log-frequency: Triton trace settings to set. */
export interface TraceConfig {
  /** In the order given, each once; empty leaves the server's levels as they are. */
  levels: string[];
  rate?: number;
  count?: number;
  logFrequency?: number;
}

const TRACE_OPTIONS = ["trace-level", "trace-rate", "trace-count", "log-frequency"];

/** The trace settings asked for; undefined when none is. */
function parseTrace(r: Reader, serviceKind: string): TraceConfig | undefined {
  const given = TRACE_OPTIONS.filter((name) => r.has(name));
  if (given.length === 0) return undefined;
  if (serviceKind !== "triton") {
    r.errors.push(
      `Trace settings (${given.map((name) => `--${name}`).join(", ")}) need --service-kind ` +
        "triton: they are a Triton extension",
    );
  }
  const integer = (name: string, minimum: number) =>
    r.has(name) ? r.bounded(name, (n) => n >= minimum, `an integer >= ${minimum}`) : undefined;
  return {
    levels: [...new Set(r.list("trace-level"))],
    rate: integer("trace-rate", 0),
    count: integer("trace-count", -1),
    logFrequency: integer("log-frequency", 0),
  };
}

/** Input data each service kind needs. */
function checkServiceInput(
  r: Reader,
  options: { service: ServiceConfig; inputData: InputDataSpec },
): void {
  const { service, inputData } = options;
  const errors = r.errors;
  if (service.serviceKind === "torchserve" && inputData.paths.length === 0) {
    errors.push(
      "--service-kind torchserve needs --input-data FILE.json naming the file to send, e.g. " +
        '{"data": [{"TORCHSERVE_INPUT": ["kitten_small.jpg"]}]}',
    );
  }
  if (
    service.serviceKind === "openai" &&
    (inputData.mode !== undefined || inputData.perInput.size > 0)
  ) {
    errors.push(
      "--service-kind openai takes payload files in --input-data " +
        '({"data": [{"payload": [{...}]}]}), or none for synthetic prompts ' +
        "(--synthetic-input-tokens-mean); not generated tensors",
    );
  }
}

export interface ProfileConfig
  extends MeasurementOptions, LoadConfig, ProtocolConfig, ExportConfig, ServiceConfig {
  model: string;
  modelVersion: string;
  url: string;
  protocol: "http" | "grpc";
  composingModels: Array<{ name: string; version: string }>;
  concurrency: Range;
  binarySearch: boolean;
  latencyThresholdMs: number;
  async: boolean;
  requestTimeoutMs: number;
  inputData: InputDataSpec;
  shapes: Map<string, number[]>;
  stringLength: number;
  stringData?: string;
  validationTolerance: number;
  inputTensorFormat: "binary" | "json";
  outputTensorFormat: "binary" | "json";
  headers: Record<string, string>;
  latencyReportFile?: string;
  verboseCsv: boolean;
  verbose: number;
  /** --trace-*: the server's trace settings to update before profiling. */
  trace?: TraceConfig;
}

/** Reads option values with their table default, recording conversion errors. */
class Reader {
  readonly errors: string[] = [];
  constructor(private readonly raw: RawOptions) {}

  has(name: string): boolean {
    return this.raw.has(name);
  }

  string(name: string): string | undefined {
    const value = this.raw.get(name) ?? optionDef(name).default;
    if (value === undefined) return undefined;
    const text = String(value);
    this.#choice(name, text);
    return text;
  }

  number(name: string): number | undefined {
    const def = optionDef(name);
    const value = this.raw.get(name) ?? def.default;
    if (value === undefined) return undefined;
    const n = typeof value === "number" ? value : Number(String(value).trim());
    const text = String(value);
    if (text.trim() === "" || !Number.isFinite(n) || (def.type === "int" && !Number.isInteger(n))) {
      const kind = def.type === "int" ? "an integer" : "a number";
      this.errors.push(`Invalid value "${text}" for ${optionLabel(name)}: expected ${kind}`);
      return undefined;
    }
    return n;
  }

  /** A number that must satisfy `ok`; the message says what is allowed. */
  bounded(name: string, ok: (n: number) => boolean, expected: string): number {
    const n = this.number(name);
    if (n !== undefined && !ok(n)) {
      this.errors.push(`Invalid value "${n}" for ${optionLabel(name)}: expected ${expected}`);
    }
    return n ?? 0;
  }

  flag(name: string): boolean {
    const value = this.raw.get(name);
    if (typeof value === "string") return value === "true" || value === "1";
    return value === true || (typeof value === "number" && value > 0);
  }

  count(name: string): number {
    const value = this.raw.get(name);
    return typeof value === "number" ? value : value === true ? 1 : 0;
  }

  list(name: string): string[] {
    const value = this.raw.get(name);
    if (value === undefined) return [];
    const list = Array.isArray(value) ? value : [String(value)];
    for (const item of list) this.#choice(name, item);
    return list;
  }

  range(name: string, fallback: string, options = { integer: true }): Range {
    const text = String(this.raw.get(name) ?? fallback);
    try {
      return parseRange(text, options);
    } catch (e) {
      this.errors.push(`Invalid value "${text}" for ${optionLabel(name)}: ${(e as Error).message}`);
      return { start: 1, end: 1, step: 1 };
    }
  }

  /** Records an error when the option has choices and `text` is not one of them. */
  #choice(name: string, text: string): void {
    const choices = optionDef(name).choices;
    if (choices && !choices.includes(text)) {
      this.errors.push(
        `Invalid value "${text}" for ${optionLabel(name)}: expected one of ${choices.join(", ")}`,
      );
    }
  }
}

function parseHeaders(reader: Reader, list: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const item of list) {
    const colon = item.indexOf(":");
    const name = item.slice(0, colon).trim();
    if (colon <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      reader.errors.push(`Invalid value "${item}" for -H/--header: expected NAME:VALUE`);
      continue;
    }
    headers[name] = item.slice(colon + 1).trim();
  }
  return headers;
}

function parseShapes(reader: Reader, list: string[]): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  for (const item of list) {
    // The last colon separates the name: tensor names may themselves contain colons.
    const colon = item.lastIndexOf(":");
    const dims = item.slice(colon + 1).split(",").map((d) => d.trim());
    if (colon <= 0 || dims.some((d) => !/^\d+$/.test(d))) {
      reader.errors.push(
        `Invalid value "${item}" for --shape: expected NAME:D1,D2,... with non-negative integer dims`,
      );
      continue;
    }
    shapes.set(item.slice(0, colon), dims.map(Number));
  }
  return shapes;
}

function parseComposing(text: string | undefined): Array<{ name: string; version: string }> {
  if (!text) return [];
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) => {
    const [name, version = ""] = s.split(":");
    return { name: name!, version };
  });
}

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

/** Converts and validates raw options; throws UsageError listing every problem. */
export function buildProfileConfig(raw: RawOptions): ProfileConfig {
  const r = new Reader(raw);
  const errors = r.errors;
  for (const name of raw.keys()) {
    if (optionDef(name).group === "Sweeps (--profile-models)") {
      errors.push(`Option ${optionLabel(name)} applies to sweeps (--profile-models) only`);
    }
  }
  const { protocol, ...service } = parseService(r, raw);
  const model = r.string("model-name");
  if (!model) errors.push("Option -m/--model-name is required");
  const concurrency = r.range("concurrency-range", "1");
  const latencyThresholdMs = r.bounded("latency-threshold", (n) => n >= 0, "a number >= 0");
  const binarySearch = r.flag("binary-search");
  const load = parseLoad(r, raw);
  const swept = load.loadMode === "concurrency" ? concurrency : load.requestRate;
  const rangeOption = load.loadMode === "concurrency"
    ? "--concurrency-range"
    : "--request-rate-range";
  if (load.loadMode !== "custom_intervals" && swept.end === 0 && latencyThresholdMs === 0) {
    errors.push(
      `The end of the ${rangeOption} and -l/--latency-threshold can not both be 0: the sweep would never stop`,
    );
  }
  if (
    binarySearch &&
    (load.loadMode === "custom_intervals" || swept.end === 0 || latencyThresholdMs === 0)
  ) {
    errors.push(
      `Option --binary-search needs an end in ${rangeOption} and a -l/--latency-threshold`,
    );
  }
  if (r.flag("async") && r.flag("sync")) {
    errors.push("Options -a/--async and --sync can not be used together");
  }
  const percentile = raw.has("percentile")
    ? r.bounded("percentile", (n) => n >= 1 && n <= 99, "an integer from 1 to 99")
    : undefined;
  let inputData: InputDataSpec = { perInput: new Map(), paths: [] };
  try {
    inputData = parseInputData(r.list("input-data"));
  } catch (error) {
    errors.push((error as RangeError).message);
  }
  checkServiceInput(r, { service, inputData });
  const url = r.string("url") ??
    (service.serviceKind === "tfserving"
      ? TFSERVING_URL
      : protocol === "grpc"
      ? "localhost:8001"
      : "localhost:8000");
  const protocolConfig = parseProtocol(r, {
    raw,
    protocol,
    url,
    serviceKind: service.serviceKind,
  });
  const config: ProfileConfig = {
    model: model ?? "",
    modelVersion: r.string("model-version") ?? "",
    url,
    protocol,
    ...service,
    composingModels: parseComposing(r.string("bls-composing-models")),
    concurrency,
    ...load,
    ...protocolConfig,
    binarySearch,
    latencyThresholdMs,
    // As in perf_analyzer, --streaming implies asynchronous calls.
    async: r.flag("async") || protocolConfig.streaming,
    measurementMode: r.string("measurement-mode") as ProfileConfig["measurementMode"],
    measurementIntervalMs: r.bounded("measurement-interval", (n) => n > 0, "an integer > 0"),
    measurementRequestCount: r.bounded(
      "measurement-request-count",
      (n) => n > 0,
      "an integer > 0",
    ),
    stabilityPercentage: r.bounded("stability-percentage", (n) => n > 0, "a number > 0"),
    maxTrials: r.bounded("max-trials", (n) => n > 0, "an integer > 0"),
    percentile,
    requestCount: r.bounded("request-count", (n) => n >= 0, "an integer >= 0"),
    warmupRequestCount: r.bounded("warmup-request-count", (n) => n >= 0, "an integer >= 0"),
    requestTimeoutMs: r.bounded("request-timeout", (n) => n >= 0, "an integer >= 0"),
    inputData,
    batchSize: r.bounded("batch-size", (n) => n >= 1, "an integer >= 1"),
    shapes: parseShapes(r, r.list("shape")),
    stringLength: r.bounded("string-length", (n) => n >= 0, "an integer >= 0"),
    stringData: r.string("string-data"),
    validationTolerance: r.bounded("validation-tolerance", (n) => n >= 0, "a number >= 0"),
    inputTensorFormat: r.string("input-tensor-format") as "binary" | "json",
    outputTensorFormat: r.string("output-tensor-format") as "binary" | "json",
    headers: parseHeaders(r, r.list("header")),
    latencyReportFile: r.string("latency-report-file"),
    verboseCsv: r.flag("verbose-csv"),
    verbose: r.count("verbose"),
    trace: parseTrace(r, service.serviceKind),
    ...parseExports(r, url),
  };
  if (config.fixedSchedule && config.batchSize > 1) {
    errors.push(
      "Option --fixed-schedule sends one input-data step per request: it can not be used " +
        `with -b ${config.batchSize}`,
    );
  }
  r.number("max-threads");
  checkWorkers(errors, config);
  if (errors.length > 0) throw new UsageError(errors);
  return config;
}

/** What --workers N > 1 can not split between threads. */
function checkWorkers(errors: string[], config: ProfileConfig): void {
  const n = config.workers;
  if (n <= 1) return;
  const refuse = (what: string, why: string) =>
    errors.push(`Option --workers ${n} can not be used with ${what}: ${why}`);
  if (config.serviceKind === "triton_c_api") {
    refuse(
      "--service-kind triton_c_api",
      "each worker thread builds its own client, which here would start a second Triton " +
        "server in the same process (the core allows one per process); the in-process server " +
        "already spreads its work over its own threads",
    );
  }
  if (config.sharedMemory !== "none") {
    refuse("--shared-memory", "each worker would need its own regions and request slots");
  }
  if (config.periodic !== undefined) {
    refuse(
      "--periodic-concurrency-range",
      "its sets of requests wait for each other's responses, which one thread must see",
    );
  }
  if (config.loadMode !== "concurrency" && config.maxInflight < n) {
    refuse(`--max-inflight ${config.maxInflight}`, `each worker needs at least 1 in flight`);
  }
}
