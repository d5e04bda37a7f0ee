/**
 * The perf_analyzer's older options section of --help: the spellings
 * perf_analyzer still accepts but calls deprecated, kept so that old scripts
 * run. Their long names are inferperf's (perf_analyzer has only the letters),
 * except --data-directory.
 */
import type { OptionDef } from "../option_types.ts";

export const OLDER: readonly OptionDef[] = [
  {
    name: "concurrent-requests",
    short: "t",
    type: "int",
    group: "perf_analyzer's older options",
    valueName: "N",
    help:
      "The concurrency: as --concurrency-range N (with -c M, N:M). Not with --concurrency-range or another load mode.",
  },
  {
    name: "max-concurrency",
    short: "c",
    type: "int",
    group: "perf_analyzer's older options",
    valueName: "M",
    help:
      "The last concurrency of the sweep, from -t N or 1: as --concurrency-range N:M (0: until -l is reached).",
  },
  {
    name: "dynamic-concurrency",
    short: "d",
    type: "boolean",
    group: "perf_analyzer's older options",
    help: "Concurrency mode, as perf_analyzer now reads it: the range of -t and -c.",
  },
  {
    name: "zero-input",
    short: "z",
    type: "boolean",
    group: "perf_analyzer's older options",
    help: "As --input-data zero.",
  },
  {
    name: "data-directory",
    perfAnalyzer: true,
    type: "list",
    group: "perf_analyzer's older options",
    valueName: "DIR",
    help: "As --input-data DIR.",
  },
];
