/** The Load section of --help: Which load mode runs over which levels. */
import { DEFAULT_SEND_BATCH_MS } from "../../load/rate.ts";
import type { OptionDef } from "../option_types.ts";

export const LOAD: readonly OptionDef[] = [
  {
    name: "concurrency-range",
    perfAnalyzer: true,
    type: "range",
    group: "Load",
    valueName: "START:END:STEP",
    sweep: "range",
    help:
      "Closed loop: keep N requests in flight for N from START to END by STEP. END 0 sweeps until the latency threshold is hit. Default 1:1:1. With --request-rate-range (AIPerf's --request-rate R --concurrency C): one value, the cap on requests in flight of the open loop.",
  },
  {
    name: "request-rate-range",
    perfAnalyzer: true,
    type: "range",
    group: "Load",
    valueName: "START:END:STEP",
    sweep: "range",
    help:
      "Open loop: send N requests per second for N from START to END by STEP. With --concurrency-range C, never more than C in flight (sends that wait for the cap are counted as held back).",
  },
  {
    name: "sweep-size",
    type: "int",
    group: "Load",
    help:
      "GuideLLM's sweep profile, with no range given: a synchronous level (one request at a time), a throughput level (--sweep-max-concurrency in flight), then N - 2 request rates evenly up to the throughput rate (--request-distribution constant or poisson), stopping at the first over-saturated rate (requests in flight and latency growing steadily over its windows).",
  },
  {
    name: "sweep-max-concurrency",
    type: "int",
    default: 64,
    group: "Load",
    help: "With --sweep-size: the requests in flight of the throughput level.",
  },
  {
    name: "request-distribution",
    perfAnalyzer: true,
    type: "string",
    default: "constant",
    group: "Load",
    choices: ["constant", "poisson", "gamma"],
    help:
      "Distribution of gaps between requests in request-rate mode: even, Poisson (exponential gaps) or gamma (gaps of shape --burstiness).",
  },
  {
    name: "burstiness",
    aliases: ["arrival-smoothness"],
    type: "float",
    default: 1,
    group: "Load",
    valueName: "K",
    help:
      "Gamma arrivals (vLLM's option; AIPerf's --arrival-smoothness): the shape of the gaps, whose coefficient of variation is 1/sqrt(K). 1 is Poisson, below 1 burstier, above 1 more even. Implies --request-distribution gamma.",
  },
  {
    name: "request-rate-ramp-duration",
    type: "float",
    group: "Load",
    valueName: "SECONDS",
    help:
      "Open loop: each level's rate ramps from --ramp-up-start to the level's over SECONDS, then holds (AIPerf's option); the gaps keep --request-distribution's character.",
  },
  {
    name: "concurrency-ramp-duration",
    type: "float",
    group: "Load",
    valueName: "SECONDS",
    help:
      "Closed loop: each level's concurrency ramps from --ramp-up-start to the level's over SECONDS (the line rounded to whole requests), then holds (AIPerf's option).",
  },
  {
    name: "ramp-up-strategy",
    type: "string",
    default: "linear",
    group: "Load",
    choices: ["linear", "exponential"],
    help:
      "The ramps' curve (vLLM's option): a straight line, or a constant growth factor per second.",
  },
  {
    name: "ramp-up-start",
    aliases: ["ramp-up-start-rps"],
    type: "float",
    group: "Load",
    valueName: "VALUE",
    help:
      "Where a ramp starts: requests per second or concurrency. Default 1, or 0 for a linear rate ramp.",
  },
  {
    name: "request-rate-stages",
    type: "string",
    structured: true,
    group: "Load",
    valueName: "STAGES",
    help:
      "Open loop of one level whose rate goes linearly from target to target (k6's stages, from 0 req/s): \"DURATION:TARGET,...\" (e.g. 30s:100,1m:100,10s:0), a YAML or JSON file of a list of {duration, target}, or that list under the key in --config. Measured as one window of the stages' whole duration.",
  },
  {
    name: "concurrency-stages",
    type: "string",
    structured: true,
    group: "Load",
    valueName: "STAGES",
    help:
      "Closed loop of one level whose concurrency goes linearly from target to target (k6's stages, from 1), given as --request-rate-stages; measured as one window of their whole duration.",
  },
  {
    name: "prefill-concurrency",
    type: "int",
    group: "Load",
    valueName: "N",
    help:
      "Streamed LLM requests (--service-kind openai --streaming): at most N waiting for their first token (AIPerf's option); a send waits until one gets it.",
  },
  {
    name: "prefill-concurrency-ramp-duration",
    type: "float",
    group: "Load",
    valueName: "SECONDS",
    help:
      "With --prefill-concurrency N: the limit starts at 1 and grows by one at even intervals to N over SECONDS, at each level (AIPerf's option).",
  },
  {
    name: "request-intervals",
    perfAnalyzer: true,
    type: "string",
    group: "Load",
    valueName: "FILE",
    help: "Send with the gaps in FILE (one interval in microseconds per line, looped).",
  },
  {
    name: "periodic-concurrency-range",
    perfAnalyzer: true,
    type: "range",
    group: "Load",
    valueName: "START:END:STEP",
    help:
      "Launch START requests, then STEP more each time every request of the latest set got --request-period responses, until END were launched (gRPC --streaming, decoupled models; needs --profile-export-file).",
  },
  {
    name: "request-period",
    perfAnalyzer: true,
    type: "int",
    default: 10,
    group: "Load",
    help: "Responses every request of the latest set must receive before the next set launches.",
  },
  {
    name: "session-concurrency",
    type: "int",
    perfAnalyzer: true,
    group: "Load",
    valueName: "N",
    help:
      'Multi-turn chat sessions (--service-kind openai): run every session of the --input-data once, N at a time. Entries with the same "session_id" are its turns, in order; each turn carries the history (earlier turns and their answers) and goes after the previous answer and its "delay" (ms). Measured as one window.',
  },
  {
    name: "request-cancellation-rate",
    type: "float",
    default: 0,
    group: "Load",
    valueName: "PCT",
    help:
      "Cancel this percentage of requests (AIPerf's option; drawn from a seeded generator): a drawn request still in flight --request-cancellation-delay after its send has its connection closed and is counted as cancelled, apart from valid and failed requests and out of every latency.",
  },
  {
    name: "request-cancellation-delay",
    type: "float",
    default: 0,
    group: "Load",
    valueName: "SECONDS",
    help: "With --request-cancellation-rate: how long after its send a drawn request is cancelled.",
  },
  {
    name: "fixed-schedule",
    perfAnalyzer: true,
    type: "boolean",
    group: "Load",
    help:
      'Open loop: send the input-data steps in order, each at its "timestamp" (ms from the start), measured as one window that ends when the schedule is done.',
  },
  {
    name: "binary-search",
    perfAnalyzer: true,
    type: "boolean",
    group: "Load",
    help:
      "Binary-search the range for the highest load under the latency threshold (STEP is the precision).",
  },
  {
    name: "latency-threshold",
    perfAnalyzer: true,
    short: "l",
    type: "float",
    default: 0,
    group: "Load",
    valueName: "MS",
    help: "Stop the sweep once latency reaches this many milliseconds (0 = no limit).",
  },
  {
    name: "max-threads",
    perfAnalyzer: true,
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
    name: "enable-mpi",
    perfAnalyzer: true,
    type: "boolean",
    group: "Load",
    help:
      "Run as one rank of an MPI job (mpirun -n N inferperf --enable-mpi ...; needs --allow-ffi): levels start together and windows end together on every rank; a level ends when every rank is stable (perf_analyzer's multi-model rule). Each rank profiles and reports its own model unless --shard.",
  },
  {
    name: "mpi-library",
    type: "string",
    group: "Load",
    valueName: "PATH",
    help:
      "With --enable-mpi: the MPI library to load instead of Open MPI's libmpi.so.40 or MPICH's libmpi.so.12.",
  },
  {
    name: "shard",
    type: "boolean",
    group: "Load",
    help:
      "With --enable-mpi: split one load across the ranks (concurrency, request rate, schedules and request counts, as --workers does across threads); rank 0 judges stability on the merged windows and writes one report.",
  },
  {
    name: "send-batching",
    type: "float",
    default: DEFAULT_SEND_BATCH_MS,
    group: "Load",
    valueName: "MS",
    help:
      "Open loop: wake up at most once per MS milliseconds and send every request due by then. Each wake-up costs tens of microseconds of CPU, so batching saves most of the client's CPU at high rates; sends leave up to MS late (the send lag shows it, and latencies are also measured from the intended time). 0 wakes up for each send.",
  },
  {
    name: "max-send-lag",
    type: "float",
    default: 1,
    group: "Load",
    valueName: "MS",
    help:
      "Open loop: a level whose p99 send lag (dispatch minus intended time) exceeds this is marked behind schedule in every report, with a warning. Given explicitly, such a level fails the run with exit code 2 (the load was not held).",
  },
  {
    name: "ignore-send-lag",
    type: "boolean",
    group: "Load",
    help: "Open loop: with --max-send-lag, report levels behind schedule but exit 0 (not 2).",
  },
  {
    name: "async",
    perfAnalyzer: true,
    short: "a",
    type: "boolean",
    group: "Load",
    help: "Asynchronous calls. Both modes keep exactly N requests in flight here.",
  },
  {
    name: "sync",
    perfAnalyzer: true,
    type: "boolean",
    group: "Load",
    help: "Synchronous calls (the default for non-sequence models).",
  },
  {
    name: "streaming",
    perfAnalyzer: true,
    type: "boolean",
    group: "Load",
    help:
      "Send requests over a gRPC bidirectional stream (implies --async); required by decoupled models. With --service-kind openai: synthetic prompts ask for streamed answers.",
  },
  {
    name: "request-parameter",
    perfAnalyzer: true,
    type: "list",
    group: "Load",
    valueName: "NAME:VALUE:TYPE",
    help:
      "Add a request parameter (gRPC and HTTP); TYPE is int, uint, bool, string or double. Repeatable.",
  },
];
