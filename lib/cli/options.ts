/**
 * The option table: the single source for parsing, `--help`, validation and
 * YAML configuration (--config). Every perf_analyzer option name is here.
 */
import { TRACE_LEVELS } from "../protocol/trace.ts";

/**
 * How an option is written. "list": repeatable; "comma-list": repeatable and
 * comma-delimited; "range": START[:END[:STEP]] (a <range> mapping in YAML);
 * "dict": KEY=VALUE pairs, comma-delimited and repeatable (a mapping in YAML).
 */
export type OptionType =
  | "string"
  | "int"
  | "float"
  | "boolean"
  | "count"
  | "list"
  | "comma-list"
  | "range"
  | "dict";

export interface OptionDef {
  /** Long name, also the YAML key. */
  name: string;
  /** perf_analyzer's single-letter spelling. */
  short?: string;
  type: OptionType;
  /** Shown in --help; parsing applies defaults in config.ts. */
  default?: string | number | boolean;
  group: Group;
  valueName?: string;
  help: string;
  choices?: readonly string[];
  /** Commands that take the option; default: profile and demo. */
  commands?: readonly Command[];
  /**
   * A dimension of sweeps (--profile-models): several values, each measured as
   * its own point; "range" also accepts START:END[:STEP] or a <range> mapping.
   */
  sweep?: "list" | "range";
}

export type Command = "profile" | "serve" | "demo" | "report";
export const PROFILE_COMMANDS: readonly Command[] = ["profile", "demo"];

export const GROUPS = [
  "Target",
  "Load",
  "Measurement",
  "Sequences",
  "Input data",
  "Protocol and TLS",
  "Output",
  "Reference server (inferperf serve)",
  "Sweeps (--profile-models)",
  "General",
] as const;
export type Group = typeof GROUPS[number];

export const OPTIONS: readonly OptionDef[] = [
  // Target
  {
    name: "model-name",
    short: "m",
    type: "string",
    group: "Target",
    valueName: "MODEL",
    help: "Name of the model to profile (required).",
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
    type: "string",
    group: "Target",
    valueName: "HOST:PORT",
    help: "Server address. Default: localhost:8000 for HTTP, localhost:8001 for gRPC.",
  },
  {
    name: "protocol",
    short: "i",
    type: "string",
    default: "http",
    group: "Target",
    choices: ["http", "grpc"],
    sweep: "list",
    help: "Protocol used to talk to the server.",
  },
  {
    name: "service-kind",
    type: "string",
    default: "triton",
    group: "Target",
    choices: ["triton", "tfserving", "torchserve", "openai", "triton_c_api"],
    help:
      "Kind of server: triton (any KServe v2 server), tfserving (gRPC Predict; default -u localhost:8500), torchserve (HTTP /predictions/MODEL with the file --input-data names), openai (--endpoint; token metrics), triton_c_api (Triton's library in this process: --triton-server-directory, --model-repository; needs --allow-ffi).",
  },
  {
    name: "triton-server-directory",
    type: "string",
    group: "Target",
    valueName: "DIR",
    help:
      "Triton install of --service-kind triton_c_api: loads DIR/lib/libtritonserver.so, backends from DIR/backends.",
  },
  {
    name: "model-repository",
    type: "string",
    group: "Target",
    valueName: "DIR",
    help: "Model repository of the in-process server (--service-kind triton_c_api).",
  },
  {
    name: "endpoint",
    type: "string",
    group: "Target",
    valueName: "PATH",
    help:
      "Endpoint of --service-kind openai: v1/chat/completions or v1/completions (after the URL of -u).",
  },
  {
    name: "model-signature-name",
    type: "string",
    default: "serving_default",
    group: "Target",
    help: "Signature of the TF Serving model to call (--service-kind tfserving).",
  },
  {
    name: "bls-composing-models",
    type: "string",
    group: "Target",
    valueName: "A[:VER],B",
    help: "Composing models of a BLS model whose server statistics are reported too.",
  },

  // Load
  {
    name: "concurrency-range",
    type: "range",
    group: "Load",
    valueName: "START:END:STEP",
    sweep: "range",
    help:
      "Closed loop: keep N requests in flight for N from START to END by STEP. END 0 sweeps until the latency threshold is hit. Default 1:1:1.",
  },
  {
    name: "request-rate-range",
    type: "range",
    group: "Load",
    valueName: "START:END:STEP",
    sweep: "range",
    help: "Open loop: send N requests per second for N from START to END by STEP.",
  },
  {
    name: "request-distribution",
    type: "string",
    default: "constant",
    group: "Load",
    choices: ["constant", "poisson"],
    help: "Distribution of gaps between requests in request-rate mode.",
  },
  {
    name: "request-intervals",
    type: "string",
    group: "Load",
    valueName: "FILE",
    help: "Send with the gaps in FILE (one interval in microseconds per line, looped).",
  },
  {
    name: "periodic-concurrency-range",
    type: "range",
    group: "Load",
    valueName: "START:END:STEP",
    help:
      "Launch START requests, then STEP more each time every request of the latest set got --request-period responses, until END were launched (gRPC --streaming, decoupled models; needs --profile-export-file).",
  },
  {
    name: "request-period",
    type: "int",
    default: 10,
    group: "Load",
    help: "Responses every request of the latest set must receive before the next set launches.",
  },
  {
    name: "fixed-schedule",
    type: "boolean",
    group: "Load",
    help:
      'Open loop: send the input-data steps in order, each at its "timestamp" (ms from the start), measured as one window that ends when the schedule is done.',
  },
  {
    name: "binary-search",
    type: "boolean",
    group: "Load",
    help:
      "Binary-search the range for the highest load under the latency threshold (STEP is the precision).",
  },
  {
    name: "latency-threshold",
    short: "l",
    type: "float",
    default: 0,
    group: "Load",
    valueName: "MS",
    help: "Stop the sweep once latency reaches this many milliseconds (0 = no limit).",
  },
  {
    name: "max-threads",
    type: "int",
    group: "Load",
    help:
      "Accepted for compatibility. perf_analyzer's sender threads bound its requests in flight; inferperf sends from one event loop: the concurrency bounds a closed loop and --max-inflight an open loop.",
  },
  {
    name: "max-inflight",
    type: "int",
    default: 1000,
    group: "Load",
    valueName: "N",
    help:
      "Open loop: requests (and connections) in flight at most. A send due while N are in flight waits; such sends are counted and reported.",
  },
  {
    name: "workers",
    type: "int",
    default: 1,
    group: "Load",
    valueName: "N",
    help:
      "Drive the load from N threads (Web Workers), for clients that need more than one core. The concurrency, the open-loop schedule, --max-inflight and request counts are split between them; measuring stays on the main thread. 1: no worker.",
  },
  {
    name: "max-send-lag",
    type: "float",
    default: 1,
    group: "Load",
    valueName: "MS",
    help:
      "Open loop: a level whose p99 send lag (dispatch minus intended time) exceeds this is untrustworthy; the run then exits with code 4.",
  },
  {
    name: "ignore-send-lag",
    type: "boolean",
    group: "Load",
    help: "Open loop: report untrustworthy levels but exit 0 (not 4).",
  },
  {
    name: "async",
    short: "a",
    type: "boolean",
    group: "Load",
    help: "Asynchronous calls. Both modes keep exactly N requests in flight here.",
  },
  {
    name: "sync",
    type: "boolean",
    group: "Load",
    help: "Synchronous calls (the default for non-sequence models).",
  },
  {
    name: "streaming",
    type: "boolean",
    group: "Load",
    help:
      "Send requests over a gRPC bidirectional stream (implies --async); required by decoupled models. With --service-kind openai: synthetic prompts ask for streamed answers.",
  },
  {
    name: "request-parameter",
    type: "list",
    group: "Load",
    valueName: "NAME:VALUE:TYPE",
    help:
      "Add a request parameter (gRPC and HTTP); TYPE is int, uint, bool, string or double. Repeatable.",
  },

  // Measurement
  {
    name: "measurement-mode",
    type: "string",
    default: "time_windows",
    group: "Measurement",
    choices: ["time_windows", "count_windows"],
    help: "Fixed-length windows, or windows of a minimum number of requests.",
  },
  {
    name: "measurement-interval",
    short: "p",
    type: "int",
    default: 5000,
    group: "Measurement",
    valueName: "MS",
    help: "Length of a time window in milliseconds.",
  },
  {
    name: "measurement-request-count",
    type: "int",
    default: 50,
    group: "Measurement",
    help: "Minimum requests per window in count_windows mode.",
  },
  {
    name: "stability-percentage",
    short: "s",
    type: "float",
    default: 10,
    group: "Measurement",
    help: "Allowed spread (max/min - 1, in %) of throughput and latency over 3 windows.",
  },
  {
    name: "max-trials",
    short: "r",
    type: "int",
    default: 10,
    group: "Measurement",
    help: "Windows to try per level before giving up on stability.",
  },
  {
    name: "percentile",
    type: "int",
    group: "Measurement",
    help: "Stabilize on and report this latency percentile (1-99) instead of the average.",
  },
  {
    name: "request-count",
    type: "int",
    default: 0,
    group: "Measurement",
    help: "Send exactly this many requests per level in one window, without stabilization.",
  },
  {
    name: "warmup-request-count",
    type: "int",
    default: 0,
    group: "Measurement",
    help: "Requests sent before measuring each level; not counted.",
  },
  {
    name: "request-timeout",
    type: "int",
    default: 0,
    group: "Measurement",
    valueName: "MS",
    help: "Fail a request with no response after this many milliseconds (0 = never).",
  },

  // Sequences
  {
    name: "num-of-sequences",
    type: "int",
    default: 4,
    group: "Sequences",
    help: "Concurrent sequences in request-rate mode.",
  },
  {
    name: "sequence-length",
    type: "int",
    default: 20,
    group: "Sequences",
    help: "Base length of a sequence.",
  },
  {
    name: "sequence-length-variation",
    type: "float",
    default: 20,
    group: "Sequences",
    help: "Variation of sequence length in percent.",
  },
  {
    name: "sequence-id-range",
    type: "string",
    group: "Sequences",
    valueName: "START[:END]",
    help: "Range of sequence ids. Default 1:4294967295.",
  },
  {
    name: "serial-sequences",
    type: "boolean",
    group: "Sequences",
    help: "Send one request of a sequence at a time.",
  },

  // Input data
  {
    name: "input-data",
    type: "list",
    group: "Input data",
    valueName: "MODE|PATH",
    sweep: "list",
    help:
      'Data to send, repeatable. random (default) or zero: generated once per input and reused. NAME:random, NAME:zero or NAME:random:MIN:MAX: generated data of one input (e.g. token ids in range); next to files it gives an input they leave out. A directory: one raw batch-1 file per input named after it (BYTES: one string per line), optional files named after outputs to validate. FILE.json: perf_analyzer\'s {"data": [...], "validation_data": [...]}; several files combine. -b N takes N consecutive steps per request.',
  },
  {
    name: "batch-size",
    short: "b",
    type: "int",
    default: 1,
    group: "Input data",
    sweep: "range",
    help: "Batch size of each request.",
  },
  {
    name: "shape",
    type: "list",
    group: "Input data",
    valueName: "NAME:D1,D2",
    help: "Shape of an input without the batch dimension; required for -1 dims. Repeatable.",
  },
  {
    name: "string-length",
    type: "int",
    default: 128,
    group: "Input data",
    help: "Length of random strings for BYTES inputs.",
  },
  {
    name: "string-data",
    type: "string",
    group: "Input data",
    help: "String sent in every element of BYTES inputs.",
  },
  {
    name: "validation-tolerance",
    type: "float",
    default: 0,
    group: "Input data",
    valueName: "X",
    help:
      "Output validation (validation_data): float outputs may differ from the expected values by X x max(1, |expected|); 0 compares bytes like perf_analyzer. Integers, BOOL and BYTES compare exactly.",
  },
  {
    name: "shared-memory",
    type: "string",
    default: "none",
    group: "Input data",
    choices: ["none", "system", "cuda"],
    help:
      "Pass tensors through shared memory registered with the server (Triton, HTTP or gRPC): system is POSIX shared memory (/dev/shm); cuda needs a CUDA GPU and is not supported.",
  },
  {
    name: "output-shared-memory-size",
    type: "int",
    default: 102400,
    group: "Input data",
    help: "Bytes of shared memory reserved for each output of each request.",
  },
  {
    name: "synthetic-input-tokens-mean",
    type: "int",
    default: 550,
    group: "Input data",
    valueName: "N",
    help:
      "Synthetic prompts (--service-kind openai without --input-data): N words on average, a word being about a token.",
  },
  {
    name: "synthetic-input-tokens-stddev",
    type: "int",
    default: 0,
    group: "Input data",
    valueName: "N",
    help: "Standard deviation of the synthetic prompt length, in words.",
  },
  {
    name: "output-tokens-mean",
    type: "int",
    group: "Input data",
    valueName: "N",
    help: "The max_tokens of synthetic prompts. Default: the server's choice.",
  },
  {
    name: "num-prompts",
    type: "int",
    default: 100,
    group: "Input data",
    valueName: "N",
    help:
      "Distinct synthetic prompts, sent round-robin (with --streaming they ask for a streamed answer).",
  },
  {
    name: "input-tensor-format",
    type: "string",
    default: "binary",
    group: "Input data",
    choices: ["binary", "json"],
    help: "Encoding of input tensors over HTTP.",
  },
  {
    name: "output-tensor-format",
    type: "string",
    default: "binary",
    group: "Input data",
    choices: ["binary", "json"],
    help: "Encoding of output tensors over HTTP.",
  },

  // Protocol and TLS
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

  // Output
  {
    name: "latency-report-file",
    short: "f",
    type: "string",
    group: "Output",
    valueName: "FILE.csv",
    commands: ["profile", "demo", "report"],
    help: "Write the results as CSV.",
  },
  {
    name: "verbose-csv",
    type: "boolean",
    group: "Output",
    help: "Add average latency, request/response and response wait columns to the CSV.",
  },
  {
    name: "profile-export-file",
    type: "string",
    group: "Output",
    valueName: "FILE.json",
    help:
      "Export every request (send and response timestamps, inputs, outputs) and the window boundaries of every level as JSON, in perf_analyzer's format. The file must not exist unless --overwrite is given.",
  },
  {
    name: "overwrite",
    type: "boolean",
    group: "Output",
    help: "Let --profile-export-file replace an existing file.",
  },
  {
    name: "collect-metrics",
    type: "boolean",
    group: "Output",
    help:
      "Scrape the server's Prometheus GPU metrics during the measurement and report them per level (console, and the CSV with --verbose-csv).",
  },
  {
    name: "metrics-url",
    type: "string",
    group: "Output",
    valueName: "URL",
    help: "Prometheus endpoint for --collect-metrics. Default: host of -u, port 8002, /metrics.",
  },
  {
    name: "metrics-interval",
    type: "int",
    default: 1000,
    group: "Output",
    valueName: "MS",
    help: "Milliseconds between metric scrapes.",
  },
  {
    name: "report-html",
    type: "string",
    group: "Output",
    valueName: "FILE.html",
    commands: ["profile", "demo", "report"],
    help:
      "Write a self-contained HTML report: throughput vs latency, latency components, percentiles and per-window charts. Sweeps and inferperf report write one by default (report.html in the checkpoint directory) with the best points, a curve per series and every point.",
  },
  {
    name: "summary-json",
    type: "string",
    group: "Output",
    valueName: "FILE.json",
    help: "Write every reported figure per level as JSON (schema: docs/summary.schema.json).",
  },

  // Reference server
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

  // General
  {
    name: "verbose",
    short: "v",
    type: "count",
    group: "General",
    help: "Print every measurement window (twice: also request errors as they happen).",
  },
  {
    name: "help",
    short: "h",
    type: "boolean",
    group: "General",
    commands: ["profile", "demo", "serve", "report"],
    help: "Show this help.",
  },
  {
    name: "version",
    type: "boolean",
    group: "General",
    commands: ["profile", "demo", "serve", "report"],
    help: "Show the version.",
  },
  {
    name: "config",
    type: "string",
    group: "General",
    valueName: "FILE.yaml",
    commands: ["profile", "demo", "serve", "report"],
    help:
      "Read options from a YAML file, each under its long name (e.g. batch-size: 4); options on the command line override it.",
  },

  // Sweeps
  {
    name: "profile-models",
    type: "comma-list",
    group: "Sweeps (--profile-models)",
    valueName: "A,B",
    commands: ["profile"],
    help:
      "Sweep these models: every combination of the values of the options marked [sweep] is measured as one point and saved to a checkpoint, so a rerun resumes.",
  },
  {
    name: "checkpoint-directory",
    type: "string",
    default: "checkpoints",
    group: "Sweeps (--profile-models)",
    valueName: "DIR",
    commands: ["profile", "report"],
    help:
      "Folder of the sweep checkpoints 0.ckpt, 1.ckpt, ...: the latest is loaded and measured points are skipped. Remove it to start afresh.",
  },
  {
    name: "objective",
    type: "string",
    default: "throughput",
    group: "Sweeps (--profile-models)",
    valueName: "METRIC",
    commands: ["profile", "report"],
    help:
      "What the best point of each model optimizes: throughput (highest), or avg-latency or pN-latency such as p99-latency (lowest).",
  },
  {
    name: "constraints",
    type: "dict",
    group: "Sweeps (--profile-models)",
    valueName: "BOUND=N,...",
    commands: ["profile", "report"],
    help:
      "Bounds the best point must meet: min-throughput (infer/sec), max-avg-latency, max-pN-latency (msec), e.g. max-p99-latency=20.",
  },
];

const BY_NAME = new Map(OPTIONS.map((o) => [o.name, o]));

export function optionDef(name: string): OptionDef {
  const def = BY_NAME.get(name);
  if (!def) throw new RangeError(`Unknown option "${name}"`);
  return def;
}

/** `-m/--model-name` style label used in error messages. */
export function optionLabel(name: string): string {
  const def = optionDef(name);
  return def.short ? `-${def.short}/--${def.name}` : `--${def.name}`;
}
