/**
 * Raw option values -> a run's plan (lib/profile/plan.ts). Every problem is
 * collected and reported at once (k6 style), each naming the option and the
 * value.
 */
import { type InputDataSpec, parseInputData } from "../input/input_data.ts";
import type { InputPlan } from "../input/plan.ts";
import type { LoadPlan } from "../load/plan.ts";
import type { Range } from "../load/range.ts";
import { MAX_SEQUENCE_ID } from "../load/sequences.ts";
import type { MetricsPlan } from "../measure/plan.ts";
import { defaultMetricsUrl, parseMetricsUrl } from "../measure/metrics_scraper.ts";
import type { MpiPlan } from "../mpi/plan.ts";
import type { ProfilePlan, TraceConfig } from "../profile/plan.ts";
import type { ClientPlan } from "../protocol/plan.ts";
import { exportTargetProblem } from "../report/export_target.ts";
import type { ReportPlan } from "../report/plan.ts";
import { UsageError } from "../types/errors.ts";
import { parseHeaders, parseProtocol, parseService, TFSERVING_URL } from "./_client_options.ts";
import { parseUrls } from "./_endpoint_options.ts";
import { Reader } from "./_reader.ts";
import { checkRepeat, parseRepeat } from "./_repeat_options.ts";
import { parseAutoSweep } from "./_auto_sweep_options.ts";
import { checkShapes, parseShapeOptions, parseWarmupDuration } from "./_shape_options.ts";
import { parseCapacity, parseSloPlan } from "./_slo_options.ts";
import { checkMpi, checkSessions, checkWorkers } from "./_plan_checks.ts";
import { optionDef, optionLabel, type RawOptions } from "./options.ts";

/** --no-progress was not given (searches and sweeps read it before any plan). */
export function progressWanted(raw: RawOptions): boolean {
  return !new Reader(raw).flag("no-progress");
}

function parseSequenceIds(r: Reader): { start: number; end: number } {
  const text = r.string("sequence-id-range");
  if (text === undefined) return { start: 1, end: MAX_SEQUENCE_ID };
  const match = /^\s*(\d+)\s*(?::\s*(\d+)\s*)?$/.exec(text);
  let start = Number(match?.[1]);
  if (match && start === 0) {
    r.warnings.push("--sequence-id-range starts at 0, which is no sequence id: starting at 1");
    start = 1;
  }
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

/** perf_analyzer's older spellings of a concurrency range: -t N, -c M, -d. */
const OLDER_CONCURRENCY = ["concurrent-requests", "max-concurrency", "dynamic-concurrency"];

/** --concurrency-range, or the range of the older -t N -c M (from 1 to 1 where not given). */
function parseConcurrency(r: Reader): Range {
  if (!OLDER_CONCURRENCY.some((name) => r.has(name))) return r.range("concurrency-range", "1");
  const start = r.has("concurrent-requests")
    ? r.bounded("concurrent-requests", (n) => n >= 1, "an integer >= 1")
    : 1;
  const end = r.has("max-concurrency")
    ? r.bounded("max-concurrency", (n) => n >= 0, "an integer >= 0")
    : 1;
  return { start, end, step: 1 };
}

/** --sequence-length; perf_analyzer takes one below 1 as its default, with a warning. */
function parseSequenceLength(r: Reader): number {
  const length = r.number("sequence-length");
  if (length === undefined || length >= 1) return length ?? 0;
  const fallback = optionDef("sequence-length").default as number;
  r.warnings.push(`--sequence-length ${length} is below 1: using ${fallback}`);
  return fallback;
}

/** What the load options give; the sweep's own (range, threshold, search) come separately. */
type LoadOptions = Omit<
  LoadPlan,
  "concurrency" | "periodic" | "binarySearch" | "latencyThresholdMs" | "async"
>;

const LOAD_MODE_OPTIONS = [
  "concurrency-range",
  "request-rate-range",
  "request-intervals",
  "session-concurrency",
  "request-rate-stages",
  "concurrency-stages",
];

/**
 * A trace (BurstGPT's, Azure's, a Mooncake trace whose first record has a
 * "timestamp") replays at its timestamps when no load mode is given, as
 * AIPerf does: --fixed-schedule.
 */
function timedTrace(r: Reader, raw: RawOptions): boolean {
  const file = r.string("input-file");
  const type = r.string("custom-dataset-type");
  if (file === undefined || r.flag("replay-ignore-timestamps")) return false;
  if ([...LOAD_MODE_OPTIONS, ...OLDER_CONCURRENCY].some((name) => raw.has(name))) return false;
  // BurstGPT's and Azure's traces time every row.
  if (type === "burstgpt_trace" || type === "azure_trace") return true;
  if (type !== "mooncake_trace") return false;
  try {
    // Up to the first record is enough: traces run to gigabytes.
    using f = Deno.openSync(file);
    const decoder = new TextDecoder();
    const chunk = new Uint8Array(65536);
    let text = "";
    for (let n = f.readSync(chunk); n !== null; n = f.readSync(chunk)) {
      text += decoder.decode(chunk.subarray(0, n), { stream: true });
      if (/\S[^\n]*\n/.test(text)) break;
    }
    const first = text.split("\n").find((line) => line.trim() !== "");
    return first !== undefined && JSON.parse(first)?.timestamp != null;
  } catch {
    // The loader says what is wrong with the file.
    return false;
  }
}

/**
 * AIPerf's --request-rate R --concurrency C: the open loop at R with at most
 * C in flight. perf_analyzer refuses the pair, so none of its command lines
 * means anything else by it.
 */
function parseConcurrencyCap(r: Reader, raw: RawOptions): number | undefined {
  if (!(raw.has("request-rate-range") && raw.has("concurrency-range"))) return undefined;
  const text = String(raw.get("concurrency-range")).trim();
  const cap = Number(text);
  if (!(/^\d+$/.test(text) && cap >= 1)) {
    r.errors.push(
      `Invalid value "${text}" for --concurrency-range with --request-rate-range: expected one ` +
        "integer >= 1, the cap on requests in flight (a range sweeps closed loops, not a cap)",
    );
    return undefined;
  }
  if (raw.has("max-inflight")) {
    r.errors.push(
      "Options --max-inflight and --concurrency-range with --request-rate-range can not be " +
        "used together: both cap the requests in flight",
    );
  }
  return cap;
}

/** AIPerf's --request-cancellation-rate PCT and --request-cancellation-delay SECONDS. */
function parseCancellation(r: Reader): Pick<LoadOptions, "cancellation"> {
  const percent = r.bounded(
    "request-cancellation-rate",
    (n) => n >= 0 && n <= 100,
    "a percentage from 0 to 100",
  );
  const delayS = r.bounded("request-cancellation-delay", (n) => n >= 0, "a number >= 0");
  if (percent === 0) {
    if (r.has("request-cancellation-delay")) {
      r.warnings.push(
        "--request-cancellation-delay without --request-cancellation-rate: no request is cancelled",
      );
    }
    return {};
  }
  return { cancellation: { percent, delayMs: delayS * 1000 } };
}

function parseLoad(r: Reader, raw: RawOptions): LoadOptions {
  const fixedSchedule = r.flag("fixed-schedule") || timedTrace(r, raw);
  const older = OLDER_CONCURRENCY.filter((name) => raw.has(name));
  const concurrencyCap = parseConcurrencyCap(r, raw);
  // With --request-rate-range, --concurrency-range is its cap, not a load mode.
  const modes = LOAD_MODE_OPTIONS
    .filter((name) => !(name === "concurrency-range" && raw.has("request-rate-range")))
    .filter((name) => raw.has(name))
    .concat(fixedSchedule ? ["fixed-schedule"] : [])
    .concat(older.length > 0 ? [older[0]] : []);
  if (older.length > 0 && raw.has("concurrency-range")) {
    r.errors.push(
      `Options ${older.map(optionLabel).join(", ")} and --concurrency-range can not be used ` +
        "together: -t N -c M is the older spelling of --concurrency-range N:M",
    );
  } else if (modes.length > 1) {
    r.errors.push(
      `Options ${modes.map(optionLabel).join(", ")} can not be used together: ` +
        "each chooses a load mode",
    );
  }
  const requestIntervals = r.string("request-intervals");
  return {
    loadMode: raw.has("request-rate-range") || raw.has("request-rate-stages")
      ? "request_rate"
      : requestIntervals !== undefined || fixedSchedule
      ? "custom_intervals"
      : "concurrency",
    requestRate: r.range("request-rate-range", "1", { integer: false }),
    ...parseShapeOptions(r, raw),
    requestIntervals,
    fixedSchedule,
    sessionConcurrency: raw.has("session-concurrency")
      ? r.bounded("session-concurrency", (n) => n >= 1, "an integer >= 1")
      : undefined,
    maxInflight: concurrencyCap ?? r.bounded("max-inflight", (n) => n >= 1, "an integer >= 1"),
    ...(concurrencyCap === undefined ? {} : { concurrencyCap }),
    sendBatchMs: r.bounded("send-batching", (n) => n >= 0, "a number >= 0"),
    workers: r.bounded("workers", (n) => n >= 1, "an integer >= 1"),
    maxSendLagMs: r.bounded("max-send-lag", (n) => n > 0, "a number > 0"),
    sendLagFails: raw.has("max-send-lag") && !r.flag("ignore-send-lag"),
    ...parseCancellation(r),
    sequences: {
      count: r.bounded("num-of-sequences", (n) => n >= 1, "an integer >= 1"),
      length: parseSequenceLength(r),
      variationPct: r.bounded("sequence-length-variation", (n) => n >= 0, "a number >= 0"),
      idRange: parseSequenceIds(r),
      serial: r.flag("serial-sequences"),
    },
  };
}

/** Output files and server metrics beyond the console report and CSV. */
type ExportOptions =
  & Pick<
    ReportPlan,
    | "profileExportFile"
    | "profileExportJsonl"
    | "overwrite"
    | "exportEndpoint"
    | "reportHtml"
    | "summaryJson"
  >
  & MetricsPlan;

function parseExports(r: Reader, url: string): ExportOptions {
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
  const requireMetrics = r.flag("require-metrics");
  if (requireMetrics && !collectMetrics) {
    r.errors.push("Option --require-metrics needs --collect-metrics");
  }
  return {
    profileExportFile,
    overwrite,
    exportEndpoint: r.string("endpoint") ?? "",
    collectMetrics,
    metricsUrl,
    metricsIntervalMs: r.bounded("metrics-interval", (n) => n > 0, "an integer > 0"),
    requireMetrics,
    reportHtml: r.string("report-html"),
    summaryJson: r.string("summary-json"),
    profileExportJsonl: r.string("profile-export-jsonl"),
  };
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
  options: {
    service: Pick<ClientPlan, "serviceKind"> & Pick<InputPlan, "syntheticPrompts">;
    inputData: InputDataSpec;
  },
): void {
  const { service, inputData } = options;
  const errors = r.errors;
  if (service.syntheticPrompts.inputFile !== undefined && inputData.paths.length > 0) {
    errors.push("Options --input-file and --input-data exclude each other: give one");
  }
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

/**
 * AIPerf's several models (-m a,b) for --service-kind openai; elsewhere -m
 * is perf_analyzer's one model, commas and all.
 */
function parseModels(
  r: Reader,
  options: { model: string | undefined; serviceKind: string },
): InputPlan["models"] {
  const selection = r.string("model-selection-strategy") as "round_robin" | "random";
  const names = options.model?.split(",").map((name) => name.trim()) ?? [];
  if (options.serviceKind !== "openai" || names.length < 2) {
    if (r.has("model-selection-strategy")) {
      r.warnings.push(
        "--model-selection-strategy applies to several models (-m A,B) only: ignored",
      );
    }
    return undefined;
  }
  if (names.some((name) => name === "")) {
    r.errors.push(`Invalid value "${options.model}" for -m/--model-name: an empty model name`);
  }
  return { names, selection };
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

function parseComposing(lists: string[]): Array<{ name: string; version: string }> {
  // perf_analyzer drops every space ("a:1 , b: 2") and adds each list to the ones before.
  return lists.join(",").replace(/\s+/g, "").split(",").filter((s) => s !== "").map((s) => {
    const [name, version = ""] = s.split(":");
    return { name: name!, version };
  });
}

/**
 * Converts and validates raw options; throws UsageError listing every problem.
 * `warn` hears of values taken as perf_analyzer takes them (it warns too).
 */
export function buildProfileConfig(
  raw: RawOptions,
  options: { warn?: (message: string) => void } = {},
): ProfilePlan {
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
  const concurrency = parseConcurrency(r);
  const latencyThresholdMs = r.bounded("latency-threshold", (n) => n >= 0, "a number >= 0");
  const binarySearch = r.flag("binary-search");
  // -1 is perf_analyzer's way of saying "the average", its default.
  const percentile = raw.has("percentile") && String(raw.get("percentile")).trim() !== "-1"
    ? r.bounded("percentile", (n) => n >= 1 && n <= 99, "-1 or an integer from 1 to 99")
    : undefined;
  const given = parseLoad(r, raw);
  const slo = parseSloPlan(r, {
    serviceKind: service.serviceKind,
    goodput: service.goodput,
    openLoop: given.loadMode !== "concurrency" ||
      r.string("search-recipe") === "max-rate-under-sla",
    percentile,
  });
  const searched = parseCapacity(r, {
    raw,
    load: { ...given, concurrency },
    slos: slo.slos,
    binarySearch,
    latencyThresholdMs,
  });
  const load = { ...given, ...searched };
  const swept = load.loadMode === "concurrency" ? load.concurrency : load.requestRate;
  const rangeOption = load.loadMode === "concurrency"
    ? "--concurrency-range"
    : "--request-rate-range";
  if (
    load.loadMode !== "custom_intervals" && swept.end === 0 && latencyThresholdMs === 0 &&
    load.capacity === undefined
  ) {
    errors.push(
      `The end of the ${rangeOption} and -l/--latency-threshold can not both be 0: the sweep would never stop`,
    );
  }
  // A capacity search refuses --binary-search itself.
  if (binarySearch && load.capacity === undefined) {
    if (load.loadMode === "custom_intervals" || swept.end === 0 || latencyThresholdMs === 0) {
      errors.push(
        `Option --binary-search needs an end in ${rangeOption} and a -l/--latency-threshold`,
      );
    } else if (swept.end < swept.start) {
      errors.push(`Option --binary-search needs the end of ${rangeOption} at or above its start`);
    }
  }
  if (r.flag("async") && r.flag("sync")) {
    errors.push("Options -a/--async and --sync can not be used together");
  }
  let inputData: InputDataSpec = { perInput: new Map(), paths: [] };
  try {
    inputData = parseInputData([
      ...r.list("input-data"),
      ...r.list("data-directory"),
      ...(r.flag("zero-input") ? ["zero"] : []),
    ]);
  } catch (error) {
    errors.push((error as RangeError).message);
  }
  checkServiceInput(r, { service, inputData });
  const urls = parseUrls(r, service.serviceKind);
  const url = urls[0] ??
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
  const models = parseModels(r, { model, serviceKind: service.serviceKind });
  const config: ProfilePlan = {
    model: models?.names[0] ?? model ?? "",
    ...(models ? { models } : {}),
    ...(urls.length > 1 ? { urls } : {}),
    modelVersion: r.string("model-version") ?? "",
    url,
    protocol,
    ...service,
    // Multi-turn conversations of a dataset file run only as sessions: the data must know.
    syntheticPrompts: load.sessionConcurrency === undefined
      ? service.syntheticPrompts
      : { ...service.syntheticPrompts, sessions: true },
    composingModels: parseComposing(r.list("bls-composing-models")),
    ...load,
    ...slo,
    ...protocolConfig,
    binarySearch,
    latencyThresholdMs,
    // As in perf_analyzer, --streaming implies asynchronous calls.
    async: r.flag("async") || protocolConfig.streaming,
    measurementMode: r.string("measurement-mode") as ProfilePlan["measurementMode"],
    measurementIntervalMs: r.bounded("measurement-interval", (n) => n > 0, "an integer > 0"),
    measurementRequestCount: r.bounded(
      "measurement-request-count",
      (n) => n > 0,
      "an integer > 0",
    ),
    stabilityPercentage: r.bounded("stability-percentage", (n) => n >= 0, "a number >= 0"),
    maxTrials: r.bounded("max-trials", (n) => n > 0, "an integer > 0"),
    percentile,
    requestCount: r.bounded("request-count", (n) => n >= 0, "an integer >= 0"),
    ...parseDuration(r),
    warmupRequestCount: r.bounded("warmup-request-count", (n) => n >= 0, "an integer >= 0"),
    ...parseWarmupDuration(r),
    requestTimeoutMs: r.bounded("request-timeout", (n) => n >= 0, "an integer >= 0"),
    stallTimeoutMs: r.bounded("stall-timeout", (n) => n >= 0, "an integer >= 0"),
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
    llmCsv: r.string("llm-csv"),
    verboseCsv: r.flag("verbose-csv"),
    verbose: r.count("verbose"),
    progress: !r.flag("no-progress"),
    trace: parseTrace(r, service.serviceKind),
    ...parseExports(r, url),
    ...parseMpi(r),
    ...parseRepeat(r),
    ...parseAutoSweep(r, raw),
  };
  if (config.fixedSchedule && config.batchSize > 1) {
    errors.push(
      "Option --fixed-schedule sends one input-data step per request: it can not be used " +
        `with -b ${config.batchSize}`,
    );
  }
  r.number("max-threads");
  checkDuration(errors, config);
  checkShapes(errors, config);
  if (config.models && config.workers > 1) {
    errors.push(
      `Several models (-m A,B) can not be used with --workers ${config.workers}: the ` +
        "threads' records do not carry each request's model",
    );
  }
  if (config.models && (config.sessionConcurrency !== undefined || config.fixedSchedule)) {
    errors.push(
      "Several models (-m A,B) can not be used with sessions or --fixed-schedule: their " +
        "requests follow the data's order, which names one model",
    );
  }
  checkSessions(errors, config);
  checkWorkers(errors, config);
  checkMpi(errors, { config, raw });
  checkRepeat(errors, config);
  if (errors.length > 0) throw new UsageError(errors);
  for (const warning of r.warnings) options.warn?.(warning);
  return config;
}

/** AIPerf's --benchmark-duration and --benchmark-grace-period, in milliseconds. */
function parseDuration(r: Reader): Pick<ProfilePlan, "benchmarkDurationMs" | "benchmarkGraceMs"> {
  const durationS = r.has("benchmark-duration")
    ? r.bounded("benchmark-duration", (n) => n > 0, "a number of seconds > 0")
    : 0;
  const graceS = r.bounded("benchmark-grace-period", (n) => n >= 0, "a number of seconds >= 0");
  if (durationS === 0 && r.has("benchmark-grace-period")) {
    r.warnings.push("--benchmark-grace-period applies to --benchmark-duration only: ignored");
  }
  return { benchmarkDurationMs: durationS * 1000, benchmarkGraceMs: graceS * 1000 };
}

/** What a --benchmark-duration window can not be combined with. */
function checkDuration(errors: string[], config: ProfilePlan): void {
  if (config.benchmarkDurationMs === 0) return;
  const refuse = (option: string, why: string) =>
    errors.push(`Option --benchmark-duration can not be used with ${option}: ${why}`);
  if (config.requestCount > 0) refuse("--request-count", "each bounds the level's one window");
  if (config.sessionConcurrency !== undefined) {
    refuse("--session-concurrency", "its sessions run once, to their end");
  }
  if (config.periodic !== undefined) {
    refuse("--periodic-concurrency-range", "its sets of requests run to their end");
  }
  if (config.workers > 1) {
    refuse(`--workers ${config.workers}`, "the grace period cancels requests on this thread only");
  }
  if (config.mpi !== undefined) refuse("--enable-mpi", "the ranks' windows end together");
}

function parseMpi(r: Reader): MpiPlan {
  if (!r.flag("enable-mpi")) return {};
  return { mpi: { library: r.string("mpi-library"), shard: r.flag("shard") } };
}
