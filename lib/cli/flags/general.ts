/** The General section of --help: Help, version, --config and what applies to every command. */
import type { OptionDef } from "../option_types.ts";

export const GENERAL: readonly OptionDef[] = [
  {
    name: "verbose",
    short: "v",
    type: "count",
    group: "General",
    help: "Print every measurement window (twice: also request errors as they happen).",
  },
  {
    name: "no-progress",
    type: "boolean",
    group: "General",
    help:
      "Show no progress on stderr (by default: on a terminal a live line with the step, k of n, elapsed time, requests, throughput, p99 latency and SLO figures; elsewhere that line every 30 s of a long level).",
  },
  {
    name: "help",
    short: "h",
    type: "boolean",
    group: "General",
    commands: ["profile", "demo", "serve", "report", "merge", "input-template"],
    help: "Show this help.",
  },
  {
    name: "version",
    perfAnalyzer: true,
    type: "boolean",
    group: "General",
    commands: ["profile", "demo", "serve", "report", "merge", "input-template"],
    help: "Show the version.",
  },
  {
    name: "config",
    type: "string",
    group: "General",
    valueName: "FILE.yaml",
    commands: ["profile", "demo", "serve", "report", "input-template"],
    help:
      "Read options from a YAML file, each under its long name (e.g. batch-size: 4); options on the command line override it.",
  },
];
