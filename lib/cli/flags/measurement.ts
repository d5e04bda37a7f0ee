/** The Measurement section of --help: How each level is measured and judged stable. */
import { DEFAULT_STALL_TIMEOUT_MS } from "../../measure/stall.ts";
import type { OptionDef } from "../option_types.ts";

export const MEASUREMENT: readonly OptionDef[] = [
  {
    name: "measurement-mode",
    perfAnalyzer: true,
    type: "string",
    default: "time_windows",
    group: "Measurement",
    choices: ["time_windows", "count_windows"],
    help: "Fixed-length windows, or windows of a minimum number of requests.",
  },
  {
    name: "measurement-interval",
    perfAnalyzer: true,
    short: "p",
    type: "int",
    default: 5000,
    group: "Measurement",
    valueName: "MS",
    help: "Length of a time window in milliseconds.",
  },
  {
    name: "measurement-request-count",
    perfAnalyzer: true,
    type: "int",
    default: 50,
    group: "Measurement",
    help:
      "Minimum requests per window in count_windows mode (a window also lasts at least 1 s, as perf_analyzer's).",
  },
  {
    name: "stability-percentage",
    perfAnalyzer: true,
    short: "s",
    type: "float",
    default: 10,
    group: "Measurement",
    help: "Allowed spread (max/min - 1, in %) of throughput and latency over 3 windows.",
  },
  {
    name: "max-trials",
    perfAnalyzer: true,
    short: "r",
    type: "int",
    default: 10,
    group: "Measurement",
    help: "Windows to try per level before giving up on stability.",
  },
  {
    name: "percentile",
    perfAnalyzer: true,
    type: "int",
    group: "Measurement",
    help: "Stabilize on and report this latency percentile (1-99) instead of the average.",
  },
  {
    name: "request-count",
    perfAnalyzer: true,
    type: "int",
    default: 0,
    group: "Measurement",
    help: "Send exactly this many requests per level in one window, without stabilization.",
  },
  {
    name: "benchmark-duration",
    type: "float",
    group: "Measurement",
    valueName: "SECONDS",
    help:
      "Measure each level as one window of this many seconds of sends, without stabilization (AIPerf's option); requests still in flight then get --benchmark-grace-period. Not with --request-count.",
  },
  {
    name: "benchmark-grace-period",
    type: "float",
    default: 30,
    group: "Measurement",
    valueName: "SECONDS",
    help:
      "With --benchmark-duration: how long requests in flight at its end may still take (their answers count); those still in flight after it are cancelled and counted apart.",
  },
  {
    name: "warmup-request-count",
    perfAnalyzer: true,
    type: "int",
    default: 0,
    group: "Measurement",
    help: "Requests sent before measuring each level; not counted.",
  },
  {
    name: "warmup-duration",
    type: "float",
    group: "Measurement",
    valueName: "SECONDS",
    help:
      "Warm each level up for this long before measuring it, not counted (AIPerf's option); with --warmup-request-count, whichever ends first. The warmup's requests in flight then complete (see --warmup-grace-period).",
  },
  {
    name: "warmup-grace-period",
    type: "float",
    group: "Measurement",
    valueName: "SECONDS",
    help:
      "With --warmup-duration: how long the warmup's requests in flight may still take (AIPerf's option; default: until they end); those still in flight then are cancelled.",
  },
  {
    name: "request-timeout",
    type: "int",
    default: 0,
    group: "Measurement",
    valueName: "MS",
    help: "Fail a request with no response after this many milliseconds (0 = never).",
  },
  {
    name: "stall-timeout",
    type: "int",
    default: DEFAULT_STALL_TIMEOUT_MS,
    group: "Measurement",
    valueName: "MS",
    help:
      "Give up on the requests in flight when no request has completed for this many milliseconds: at the end of a level or warmup (they fail as abandoned), and in a count window (it ends short). 0 waits for ever, as perf_analyzer does.",
  },
  {
    name: "goodput",
    type: "list",
    variadic: true,
    group: "Measurement",
    valueName: "METRIC:VALUE ...",
    help:
      "LLM service level objectives: time_to_first_token, time_to_second_token, inter_token_latency, request_latency (ms, upper bounds), output_token_throughput_per_user (tokens/s, lower bound). Reports the rate of requests that met all of them.",
  },
  {
    name: "num-profile-runs",
    type: "int",
    default: 1,
    group: "Measurement",
    help:
      "Repeat the whole measurement N times and report every headline figure of every level as the mean with its Student's t confidence interval and coefficient of variation (AIPerf's option).",
  },
  {
    name: "confidence-level",
    type: "float",
    default: 0.95,
    group: "Measurement",
    commands: ["profile", "demo", "compare"],
    help:
      "With --num-profile-runs: the confidence level of the intervals (0 < F < 1); for compare, of its tests and intervals.",
  },
  {
    name: "convergence-threshold",
    type: "float",
    group: "Measurement",
    valueName: "F",
    help:
      "With --num-profile-runs: stop repeating (after at least 3 runs) once every headline figure's confidence interval spans at most F of its mean (ci_high - ci_low <= F x mean; 0.1: within +-5 %), as AIPerf's ci_width convergence.",
  },
  {
    name: "profile-run-cooldown-seconds",
    type: "float",
    default: 0,
    group: "Measurement",
    valueName: "SECONDS",
    help: "With --num-profile-runs: pause between runs (AIPerf's option).",
  },
  {
    name: "slice-duration",
    type: "float",
    group: "Measurement",
    valueName: "SECONDS",
    help:
      "LLM runs: every metric also per slice of this many seconds of each level (requests by send time), as AIPerf's time slices.",
  },
];
