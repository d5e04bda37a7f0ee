/**
 * argv -> typed configuration. Every problem is collected and reported at
 * once (k6 style), each naming the option and the value.
 */
import { parseArgs } from "node:util";
import {
  type Command,
  type OptionDef,
  optionDef,
  optionLabel,
  OPTIONS,
  PROFILE_COMMANDS,
} from "./options.ts";
import type { MeasurementOptions } from "../measure/types.ts";
import { parseRange, type Range } from "./range.ts";

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

const PARSE_OPTIONS = Object.fromEntries(
  OPTIONS.map((o) => [o.name, {
    type: o.type === "boolean" || o.type === "count" ? "boolean" as const : "string" as const,
    ...(o.short ? { short: o.short } : {}),
    ...(o.type === "list" || o.type === "count" ? { multiple: true } : {}),
  }]),
);

/** Splits argv into a command and raw option values. */
export function parseArgv(argv: readonly string[]): ParsedArgs {
  const first = argv[0];
  const command: Command = first === "serve" || first === "demo" || first === "profile"
    ? first
    : "profile";
  const args = command === first ? argv.slice(1) : argv;
  const { tokens } = parseArgs({
    args: [...args],
    options: PARSE_OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const errors: string[] = [];
  const options: RawOptions = new Map();
  for (const token of tokens) {
    if (token.kind === "positional") {
      errors.push(`Unexpected argument "${token.value}"`);
      continue;
    }
    if (token.kind !== "option") continue;
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
    if (def.type === "list") {
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

export interface ProfileConfig extends MeasurementOptions {
  model: string;
  modelVersion: string;
  url: string;
  protocol: "http" | "grpc";
  serviceKind: string;
  composingModels: Array<{ name: string; version: string }>;
  concurrency: Range;
  binarySearch: boolean;
  latencyThresholdMs: number;
  async: boolean;
  requestTimeoutMs: number;
  inputData: string[];
  shapes: Map<string, number[]>;
  stringLength: number;
  stringData?: string;
  inputTensorFormat: "binary" | "json";
  outputTensorFormat: "binary" | "json";
  headers: Record<string, string>;
  latencyReportFile?: string;
  verboseCsv: boolean;
  verbose: number;
}

/** Reads option values with their table default, recording conversion errors. */
class Reader {
  readonly errors: string[] = [];
  constructor(private readonly raw: RawOptions) {}

  has(name: string): boolean {
    return this.raw.has(name);
  }

  string(name: string): string | undefined {
    const def = optionDef(name);
    const value = this.raw.get(name) ?? def.default;
    if (value === undefined) return undefined;
    const text = String(value);
    if (def.choices && !def.choices.includes(text)) {
      this.errors.push(
        `Invalid value "${text}" for ${optionLabel(name)}: expected one of ${
          def.choices.join(", ")
        }`,
      );
    }
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
    return Array.isArray(value) ? value : [String(value)];
  }

  range(name: string, fallback: string): Range {
    const text = String(this.raw.get(name) ?? fallback);
    try {
      return parseRange(text, { integer: true });
    } catch (e) {
      this.errors.push(`Invalid value "${text}" for ${optionLabel(name)}: ${(e as Error).message}`);
      return { start: 1, end: 1, step: 1 };
    }
  }
}

function pendingErrors(raw: RawOptions): string[] {
  const errors: string[] = [];
  for (const [name] of raw) {
    const def: OptionDef = optionDef(name);
    if (def.pending) {
      errors.push(
        `Option ${optionLabel(name)} is not supported yet (it comes with ${def.pending})`,
      );
    }
  }
  return errors;
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
  };
  if (r.errors.length > 0) throw new UsageError(r.errors);
  return config;
}

/** Converts and validates raw options; throws UsageError listing every problem. */
export function buildProfileConfig(raw: RawOptions): ProfileConfig {
  const r = new Reader(raw);
  const errors = r.errors;
  errors.push(...pendingErrors(raw));
  const protocol = r.string("protocol") as "http" | "grpc";
  const model = r.string("model-name");
  if (!model) errors.push("Option -m/--model-name is required");
  const serviceKind = r.string("service-kind")!;
  if (serviceKind !== "triton") {
    errors.push(
      `Value "${serviceKind}" of --service-kind is not supported yet (only "triton" is; others come with service kinds)`,
    );
  }
  if (protocol === "grpc") {
    errors.push('Value "grpc" of -i/--protocol is not supported yet (it comes with gRPC support)');
  }
  const concurrency = r.range("concurrency-range", "1");
  const latencyThresholdMs = r.bounded("latency-threshold", (n) => n >= 0, "a number >= 0");
  const binarySearch = r.flag("binary-search");
  if (concurrency.end === 0 && latencyThresholdMs === 0) {
    errors.push(
      "The end of the --concurrency-range and -l/--latency-threshold can not both be 0: the sweep would never stop",
    );
  }
  if (binarySearch && (concurrency.end === 0 || latencyThresholdMs === 0)) {
    errors.push(
      "Option --binary-search needs an end in --concurrency-range and a -l/--latency-threshold",
    );
  }
  if (r.flag("async") && r.flag("sync")) {
    errors.push("Options -a/--async and --sync can not be used together");
  }
  const percentile = raw.has("percentile")
    ? r.bounded("percentile", (n) => n >= 1 && n <= 99, "an integer from 1 to 99")
    : undefined;
  const inputData = r.list("input-data");
  for (const mode of inputData) {
    if (mode !== "random" && mode !== "zero") {
      errors.push(
        `Value "${mode}" of --input-data is not supported yet (only random and zero are; files come with input data files)`,
      );
    }
  }
  const sharedMemory = r.string("shared-memory");
  if (sharedMemory !== "none") {
    errors.push(
      `Value "${sharedMemory}" of --shared-memory is not supported yet (it comes with service kinds)`,
    );
  }
  const config: ProfileConfig = {
    model: model ?? "",
    modelVersion: r.string("model-version") ?? "",
    url: r.string("url") ?? (protocol === "grpc" ? "localhost:8001" : "localhost:8000"),
    protocol,
    serviceKind,
    composingModels: parseComposing(r.string("bls-composing-models")),
    concurrency,
    binarySearch,
    latencyThresholdMs,
    async: r.flag("async"),
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
    inputData: inputData.length > 0 ? inputData : ["random"],
    batchSize: r.bounded("batch-size", (n) => n >= 1, "an integer >= 1"),
    shapes: parseShapes(r, r.list("shape")),
    stringLength: r.bounded("string-length", (n) => n >= 0, "an integer >= 0"),
    stringData: r.string("string-data"),
    inputTensorFormat: r.string("input-tensor-format") as "binary" | "json",
    outputTensorFormat: r.string("output-tensor-format") as "binary" | "json",
    headers: parseHeaders(r, r.list("header")),
    latencyReportFile: r.string("latency-report-file"),
    verboseCsv: r.flag("verbose-csv"),
    verbose: r.count("verbose"),
  };
  r.number("max-threads");
  r.number("output-shared-memory-size");
  if (errors.length > 0) throw new UsageError(errors);
  return config;
}
