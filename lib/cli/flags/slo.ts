/** The SLOs section of --help: service level objectives, the capacity search and the CI gates. */
import { CAPACITY_RECIPES } from "../../load/capacity.ts";
import type { OptionDef } from "../option_types.ts";

const GROUP = "SLOs, capacity search and CI gates";

export const SLO: readonly OptionDef[] = [
  {
    name: "slo",
    type: "list",
    group: GROUP,
    valueName: "METRIC:STAT<=VALUE",
    help:
      "A service level objective, repeatable or comma-separated: METRIC:STAT OP VALUE with OP <=, >=, < or >, e.g. request_latency:p99<=30, time_to_first_token:p90<=200, request_throughput>=100 (times in ms; STAT avg, std, min, max or pN; the summary JSON's metric names, perf_analyzer's and AIPerf's too). A per-request metric without STAT (request_latency<=30) bounds each request, judged by --slo-attainment. Each level's report says whether they hold.",
  },
  {
    name: "slo-attainment",
    type: "float",
    group: GROUP,
    valueName: "F",
    help:
      "The share of requests (0 to 1, failed ones count as missing) that must meet every per-request SLO: AIPerf's good request fraction. Default 1: every request.",
  },
  {
    name: "search-recipe",
    type: "string",
    group: GROUP,
    choices: CAPACITY_RECIPES,
    help:
      "Find the highest load at which every --slo holds: a concurrency (max-concurrency-under-sla), a request rate (max-rate-under-sla), or a concurrency whose requests meet the per-request SLOs for --slo-attainment of them (max-goodput-under-slo). Within --concurrency-range/--request-rate-range START:END, else doubling from 1 (or START of START:0) until an SLO breaks, then bisection; the boundary levels are measured again.",
  },
  {
    name: "search-resolution",
    type: "float",
    group: GROUP,
    valueName: "N",
    help:
      "When the capacity search stops: the gap between the passing and the failing level, in requests in flight (default 1) or as a percentage of the request rate (default 5).",
  },
  {
    name: "search-checkpoint",
    type: "string",
    default: "capacity.ckpt",
    group: GROUP,
    valueName: "FILE",
    help:
      "The capacity search saves each measured level here; a rerun with the same settings resumes from it. Remove it to start afresh.",
  },
  {
    name: "threshold",
    type: "list",
    group: GROUP,
    valueName: "METRIC:STAT<=VALUE",
    help:
      "A CI gate in --slo's syntax, repeatable or comma-separated, judged on every level (k6's thresholds): a breach ends the run with exit code 4 once the reports are written.",
  },
  {
    name: "abort-on-fail",
    type: "boolean",
    group: GROUP,
    help: "Stop at the first level that breaches a --threshold (what was measured is written).",
  },
  {
    name: "failed-request-threshold",
    type: "string",
    group: GROUP,
    valueName: "N|PCT%",
    help:
      "Abort once this many requests failed (a count, or a percentage of the requests sent, e.g. 5%), checked after every window: exit code 4, with what was measured written.",
  },
];
