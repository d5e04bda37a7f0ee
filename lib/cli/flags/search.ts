/**
 * The model configuration search section of --help (--profile-models with
 * --model-repository: the best configuration of each model of a Triton model
 * repository, its config.pbtxt variants loaded into Triton one by one):
 * Model Analyzer's `profile` options under its names (snake_case in YAML).
 */
import type { OptionDef } from "../option_types.ts";

const GROUP = "Model config search (--profile-models with --model-repository)" as const;

function int(name: string, fallback: number, help: string): OptionDef {
  return {
    name,
    type: "int",
    default: fallback,
    group: GROUP,
    valueName: "N",
    commands: ["profile"],
    help,
  };
}

export const SEARCH: readonly OptionDef[] = [
  {
    name: "output-model-repository-path",
    type: "string",
    default: "./output_model_repository",
    group: GROUP,
    valueName: "DIR",
    commands: ["profile"],
    help:
      "Where the variants (<model>_config_<N>, <model>_config_default) and the best configuration (<model>_best) are written.",
  },
  {
    name: "override-output-model-repository",
    type: "boolean",
    group: GROUP,
    commands: ["profile"],
    help: "Replace an existing --output-model-repository-path (otherwise refused).",
  },
  {
    name: "triton-launch-mode",
    type: "string",
    default: "local",
    choices: ["local", "remote", "c_api", "docker"],
    group: GROUP,
    valueName: "MODE",
    commands: ["profile"],
    help:
      "Where Triton runs. local: start --triton-server-path with explicit model control; remote: a running server (--triton-http-endpoint) with explicit model control, variants loaded through its repository API; c_api: Triton's library in process (--triton-server-directory).",
  },
  {
    name: "triton-server-path",
    type: "string",
    default: "tritonserver",
    group: GROUP,
    valueName: "PATH",
    commands: ["profile"],
    help: "The tritonserver executable of local mode.",
  },
  {
    name: "triton-output-path",
    type: "string",
    group: GROUP,
    valueName: "FILE",
    commands: ["profile"],
    help: "Where local mode writes the server's log (default: a temporary file, named on failure).",
  },
  {
    name: "triton-server-flags",
    type: "dict",
    group: GROUP,
    valueName: "FLAG=VALUE,...",
    commands: ["profile"],
    help:
      "More tritonserver flags in local mode, e.g. backend-directory=/opt/tritonserver/backends.",
  },
  {
    name: "triton-server-environment",
    type: "dict",
    structured: true,
    group: GROUP,
    valueName: "NAME=VALUE,...",
    commands: ["profile"],
    help:
      "Environment variables of the local server (Model Analyzer's triton_server_environment; also per model in profile_models, the same for every model).",
  },
  {
    name: "perf-analyzer-flags",
    type: "dict",
    structured: true,
    group: GROUP,
    valueName: "OPTION=VALUE,...",
    commands: ["profile"],
    help:
      "Options of every point's profile run under perf_analyzer's long names (percentile=95, shape=INPUT0:16, input-data=FILE, ...); a model's own perf_analyzer_flags in profile_models replace these.",
  },
  {
    name: "triton-http-endpoint",
    type: "string",
    default: "localhost:8000",
    group: GROUP,
    valueName: "HOST:PORT",
    commands: ["profile"],
    help: "The server of remote mode (HTTP: the repository API, and the load unless -i grpc).",
  },
  {
    name: "triton-grpc-endpoint",
    type: "string",
    default: "localhost:8001",
    group: GROUP,
    valueName: "HOST:PORT",
    commands: ["profile"],
    help: "The gRPC endpoint of remote mode, for -i grpc.",
  },
  {
    name: "run-config-search-mode",
    type: "string",
    default: "brute",
    choices: ["brute", "quick", "optuna"],
    group: GROUP,
    valueName: "MODE",
    commands: ["profile"],
    help:
      "How variants are chosen. brute: every instance count and max batch size in the ranges below (or every combination of model_config_parameters); quick: hill climbing from the smallest, one instance or one max batch size step at a time, while throughput improves; optuna: single points of the whole space (instances x max batch size x load) suggested by a seeded Tree-structured Parzen Estimator, then a load sweep of the best.",
  },
  {
    name: "run-config-search-disable",
    type: "boolean",
    group: GROUP,
    commands: ["profile"],
    help: "Measure only the model's own configuration (its concurrency sweep).",
  },
  int(
    "run-config-search-min-instance-count",
    1,
    "The smallest instance count of the brute search.",
  ),
  int("run-config-search-max-instance-count", 5, "The largest instance count of the brute search."),
  int(
    "run-config-search-min-model-batch-size",
    1,
    "The smallest max_batch_size of the brute search (powers of two), for models that batch.",
  ),
  int(
    "run-config-search-max-model-batch-size",
    128,
    "The largest max_batch_size of the brute search.",
  ),
  int(
    "run-config-search-min-concurrency",
    1,
    "The first concurrency of each variant's sweep (powers of two).",
  ),
  int(
    "run-config-search-max-concurrency",
    1024,
    "The last concurrency of each variant's sweep; it stops earlier once 4 points gain < 5 % throughput, or a latency constraint is broken.",
  ),
  int(
    "optuna-min-trials",
    20,
    "Optuna search: at least this many trials (default: --min-percentage-of-search-space of the space).",
  ),
  int(
    "optuna-max-trials",
    200,
    "Optuna search: at most this many trials (default: --max-percentage-of-search-space of the space).",
  ),
  int(
    "min-percentage-of-search-space",
    5,
    "Optuna search: the least share of the space's points to try, percent.",
  ),
  int(
    "max-percentage-of-search-space",
    10,
    "Optuna search: the largest share of the space's points to try, percent.",
  ),
  int(
    "optuna-early-exit-threshold",
    10,
    "Optuna search: past the minimum, stop after this many trials without a better score.",
  ),
  {
    name: "optuna-seed",
    type: "int",
    default: 0,
    group: GROUP,
    valueName: "N",
    commands: ["profile"],
    help:
      "Optuna search: the sampler's seed (fixed, so that a search repeats; Model Analyzer draws one).",
  },
  {
    name: "optuna-sampler",
    type: "string",
    default: "multivariate",
    choices: ["multivariate", "independent"],
    group: GROUP,
    valueName: "KIND",
    commands: ["profile"],
    help:
      "Optuna search: multivariate, one Parzen estimator over all parameters together (finds a best that needs several parameters high at once); independent, one per parameter, as Optuna's default TPESampler and Model Analyzer.",
  },
  {
    name: "use-concurrency-formula",
    type: "boolean",
    group: GROUP,
    commands: ["profile"],
    help:
      "Optuna search: each trial's concurrency is 2 x instances x max batch size instead of searched.",
  },
  {
    name: "concurrency-sweep-disable",
    type: "boolean",
    group: GROUP,
    commands: ["profile"],
    help: "Optuna search: no concurrency sweep of the best configurations after the trials.",
  },
  {
    name: "run-config-profile-models-concurrently-enable",
    type: "boolean",
    group: GROUP,
    commands: ["profile"],
    help:
      "Load the models of --profile-models together and measure them at the same time (one load per model, levels started and ended together): the search runs over combinations of their configurations (brute: every one; quick: a climb over every model's coordinates), ranked by the models' objectives combined with their weighting.",
  },
  {
    name: "request-rate-search-enable",
    type: "boolean",
    group: GROUP,
    commands: ["profile"],
    help:
      "Sweep each variant by request rate (an open loop, powers of two from --run-config-search-min-request-rate) instead of concurrency; implied by giving either request rate bound.",
  },
  int(
    "run-config-search-min-request-rate",
    16,
    "The first request rate of each variant's request-rate sweep (powers of two).",
  ),
  int(
    "run-config-search-max-request-rate",
    8192,
    "The last request rate of each variant's request-rate sweep; it stops earlier as the concurrency sweep does.",
  ),
  int(
    "run-config-search-max-binary-search-steps",
    5,
    "Brute search: where a top configuration's sweep crosses a latency constraint, this many points bisect between the last load within it and the first beyond.",
  ),
  {
    name: "objectives",
    type: "dict",
    group: GROUP,
    valueName: "METRIC=WEIGHT,...",
    commands: ["profile", "report"],
    help:
      "What ranks the configurations, Model Analyzer's way: perf_throughput, perf_latency_avg/p90/p95/p99, cpu_used_ram, each with a weight (default perf_throughput=1).",
  },
  {
    name: "export-path",
    type: "string",
    default: ".",
    group: GROUP,
    valueName: "DIR",
    commands: ["profile", "report"],
    help:
      "Where results/metrics-model-inference.csv, results/metrics-server-only.csv and reports/ go.",
  },
  {
    name: "inference-output-fields",
    type: "comma-list",
    group: GROUP,
    valueName: "FIELD,...",
    commands: ["profile", "report"],
    help:
      "The columns of metrics-model-inference.csv, Model Analyzer's names: model_name, batch_size, concurrency, request_rate, model_config_path, combination (a concurrent search's, always shown there), instance_group, max_batch_size, satisfies_constraints, perf_throughput, perf_latency_avg/p90/p95/p99, perf_client_send_recv, perf_client_response_wait, perf_server_queue, perf_server_compute_input/infer/output, cpu_used_ram.",
  },
  {
    name: "server-output-fields",
    type: "comma-list",
    group: GROUP,
    valueName: "FIELD,...",
    commands: ["profile", "report"],
    help:
      "The columns of metrics-server-only.csv: model_name, model_config_path, cpu_used_ram (default all three).",
  },
  {
    name: "report-model-configs",
    type: "comma-list",
    group: GROUP,
    valueName: "CONFIG,...",
    commands: ["report"],
    help:
      "With inferperf report of a search's checkpoint: also a detailed report of each of these configurations (e.g. delay_config_5), reports/detailed/<config>/detailed_report.html, and .pdf where headless Chromium runs.",
  },
  {
    name: "num-top-model-configs",
    type: "int",
    default: 0,
    group: GROUP,
    valueName: "N",
    commands: ["profile", "report"],
    help:
      'The best N configurations across all models, ranked under the search\'s own objectives and constraints: a summary and reports/summaries/"Best Configs Across All Models"/result_summary.html (0: none).',
  },
  int(
    "num-configs-per-model",
    3,
    "The configurations of each model the summary shows (the best first).",
  ),
];
