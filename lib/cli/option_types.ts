/** The vocabulary of the option table (options.ts): how an option is written, grouped and applied. */

export type RawValue = string | number | boolean | string[];
/** Values by long option name, as given (strings from argv, typed values from YAML). */
export type RawOptions = Map<string, RawValue>;

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
  /** Other long spellings on the command line (AIPerf's and genai-perf's names of the option). */
  aliases?: readonly string[];
  /**
   * The long name is perf_analyzer's: an abbreviation of it resolves among
   * perf_analyzer's names first, as its getopt_long does (`--concurrency 4`).
   */
  perfAnalyzer?: boolean;
  type: OptionType;
  /** Shown in --help; parsing applies defaults in config.ts. */
  default?: string | number | boolean;
  group: Group;
  valueName?: string;
  help: string;
  choices?: readonly string[];
  /** The choices are matched regardless of case, as perf_analyzer does (`-i gRPC`). */
  ignoreCase?: boolean;
  /** Commands that take the option; default: profile and demo. */
  commands?: readonly Command[];
  /**
   * A dimension of sweeps (--profile-models): several values, each measured as
   * its own point; "range" also accepts START:END[:STEP] or a <range> mapping.
   */
  sweep?: "list" | "range";
  /** In YAML, also a mapping or a list of mappings, kept as its JSON text (one item). */
  structured?: boolean;
  /** A "list" whose values may also follow it as separate arguments (genai-perf's nargs). */
  variadic?: boolean;
}

export type Command =
  | "profile"
  | "serve"
  | "demo"
  | "report"
  | "merge"
  | "compare"
  | "input-template";
/** The commands that take the profile's options (input-template: those naming the model and server). */
export const PROFILE_COMMANDS: readonly Command[] = ["profile", "demo", "input-template"];

export const GROUPS = [
  "Target",
  "Load",
  "Measurement",
  "SLOs, capacity search and CI gates",
  "Sequences",
  "Input data",
  "Protocol and TLS",
  "Output",
  "Reference server (inferperf serve)",
  "Sweeps (--profile-models)",
  "Model config search (--profile-models with --model-repository)",
  "Engine search (--config with engine)",
  "perf_analyzer's older options",
  "General",
] as const;
export type Group = typeof GROUPS[number];
