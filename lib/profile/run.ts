/**
 * One profiling run: discover the model, build the requests, sweep the load
 * levels. Returns data; printing and exit codes belong to main.ts.
 */
import { type ProfileConfig, UsageError } from "../cli/config.ts";
import { sweep, type SweepOutcome } from "../load/sweep.ts";
import { measureLevel } from "../measure/level.ts";
import type { LatencyHistogram } from "../measure/histogram.ts";
import { stabilizingLatency } from "../measure/stability.ts";
import type { LevelResult, RequestSink, WindowData } from "../measure/types.ts";
import { KServeHttpClient } from "../protocol/kserve_http.ts";
import { grpcTls, httpsTls } from "./tls.ts";
import {
  hasStatistics,
  type InferenceClient,
  type ModelInfo,
  type ModelStatistics,
  type RequestTiming,
  type ServerInfo,
  type TraceSettings,
} from "../protocol/types.ts";
import { loadInputs, planLoad } from "./loads.ts";
import {
  buildServiceRequests,
  createServiceClient,
  openSharedMemory,
  type SharedMemorySession,
} from "./service_kinds.ts";
import { runPeriodic } from "./periodic.ts";
import { updateTraceSettings } from "./trace.ts";
import type { Interrupt } from "./interrupt.ts";
import { MetricsScraper } from "../measure/metrics_scraper.ts";
import { reportedWindows } from "../report/components.ts";
import type { SeenRequest } from "../report/export.ts";

export interface RunEvents {
  /** --trace-* updated the server's trace settings: all of them, as it answered (before `ready`). */
  traceSettings?(settings: TraceSettings): void;
  /** The model is known and requests are built; load starts next. */
  ready?(info: { server: ServerInfo; model: ModelInfo }): void;
  /** A window of `level` ended (verbose output). */
  window?(window: WindowData, info: { level: number; index: number }): void;
  /** A load level is measured. */
  level?(result: LevelResult): void;
  /** A load level starts (progress display). */
  levelStart?(value: number): void;
  /** Something the user should know that does not stop the run. */
  warning?(message: string): void;
  /** Sees every request of the run (the profile export). */
  requests?: RequestTracer;
  /** Makes each window's latency histogram, for the reports that carry them. */
  newHistogram?: () => LatencyHistogram;
}

/** A RequestSink that also sees, through the client it wraps, what each request sent and got. */
export interface RequestTracer extends RequestSink {
  wrapClient<C extends InferenceClient>(client: C): C;
  /** --workers N > 1: what a worker's client saw of the request replayed next with `timing`. */
  noteRemote(timing: RequestTiming, seen: SeenRequest): void;
}

/** `result` with the GPU metrics scraped during the windows it reports. */
function withMetrics(result: LevelResult, scraper: MetricsScraper | undefined): LevelResult {
  const windows = reportedWindows(result);
  if (scraper === undefined || windows.length === 0) return result;
  const metrics = scraper.take(windows[0].startMs, windows[windows.length - 1].endMs);
  return metrics ? { ...result, metrics } : result;
}

export interface RunOutcome extends SweepOutcome {
  server: ServerInfo;
  model: ModelInfo;
}

/** The KServe client of -i: HTTP (with --ssl-https-*) or gRPC (with --ssl-grpc-*). */
export async function createClient(config: ProfileConfig): Promise<InferenceClient> {
  const timeout = config.requestTimeoutMs > 0 ? { requestTimeoutMs: config.requestTimeoutMs } : {};
  // Loaded for gRPC runs only: protobuf, HTTP/2 and zlib would add about 30 ms to every start-up.
  const grpc = config.protocol === "grpc" ? await import("../protocol/grpc/client.ts") : undefined;
  try {
    const service = await createServiceClient(config, timeout);
    if (service) return service;
    if (grpc) {
      return new grpc.GrpcClient({
        url: config.url,
        headers: config.headers,
        compression: config.grpcCompression,
        streaming: config.streaming,
        tls: grpcTls(config.grpcSsl),
        ...timeout,
      });
    }
    return new KServeHttpClient({
      url: config.url,
      headers: config.headers,
      inputFormat: config.inputTensorFormat,
      outputFormat: config.outputTensorFormat,
      tls: httpsTls(config.httpsSsl),
      ...timeout,
    });
  } catch (error) {
    // A URL or header the client cannot use is the user's to fix, like any option value.
    if (error instanceof RangeError) throw new UsageError([error.message]);
    throw error;
  }
}

/** Statistics of the profiled model and its composing models, when the server offers them. */
function statisticsSource(
  client: InferenceClient,
  options: { server: ServerInfo; model: ModelInfo; config: ProfileConfig },
): (() => Promise<ModelStatistics[]>) | undefined {
  if (!hasStatistics(client) || !options.server.extensions.includes("statistics")) return undefined;
  const targets = [
    { name: options.model.name, version: options.config.modelVersion },
    ...options.model.composingModels.map((name) => ({ name, version: "" })),
    ...options.config.composingModels,
  ];
  return async () =>
    (await Promise.all(targets.map((t) => client.modelStatistics(t.name, t.version)))).flat();
}

export async function runProfile(
  config: ProfileConfig,
  options: { interrupt: Interrupt; events?: RunEvents; client?: InferenceClient },
): Promise<RunOutcome> {
  const { interrupt, events = {} } = options;
  const tracer = events.requests;
  const base = options.client ?? await createClient(config);
  const client = tracer ? tracer.wrapClient(base) : base;
  // Scraping runs on its own timer, started (and its endpoint checked) once the model is known;
  // levels take its samples.
  const scraper = config.collectMetrics
    ? new MetricsScraper(config.metricsUrl, {
      intervalMs: config.metricsIntervalMs,
      onWarning: (message) => events.warning?.(message),
    })
    : undefined;
  let shared: SharedMemorySession | undefined;
  try {
    const server = await client.serverInfo();
    const trace = await updateTraceSettings(client, { config, server });
    if (trace) events.traceSettings?.(trace);
    const model = await client.modelInfo(config.model, config.modelVersion);
    const plan = await buildServiceRequests(model, config);
    // Every request is built from the plan's tensor data, so the plan's requests place them all.
    shared = await openSharedMemory(client, { config, server, requests: plan.requests });
    const inputs = loadInputs(client, { config, model, plan, place: shared?.place.bind(shared) });
    await scraper?.start();
    events.ready?.({ server, model });
    const statistics = statisticsSource(client, { server, model, config });
    if (config.periodic !== undefined) {
      events.levelStart?.(config.periodic.range.end);
      const result = withMetrics(
        await runPeriodic(client, {
          ...config,
          periodic: config.periodic,
          requests: inputs.prepared,
          interrupt,
          sink: tracer,
          newHistogram: events.newHistogram,
        }),
        scraper,
      );
      events.window?.(result.windows[0], { level: result.value, index: 0 });
      events.level?.(result);
      return { results: [result], server, model };
    }
    const load = await planLoad(client, { config, model, ...inputs, tracer });
    try {
      const outcome = await sweep(async (value) => {
        events.levelStart?.(value);
        const result = withMetrics(
          await measureLevel(load.level(value), {
            ...config,
            mode: load.mode,
            value,
            model: config.model,
            interrupt,
            ...(statistics ? { statistics } : {}),
            onWindow: (w, index) => events.window?.(w, { level: value, index }),
            requestSink: tracer,
            ...(load.requestCount === undefined ? {} : { requestCount: load.requestCount }),
            newHistogram: events.newHistogram,
          }),
          scraper,
        );
        if (result.stable || interrupt.soft) events.level?.(result);
        return result;
      }, {
        range: load.range,
        binarySearch: config.binarySearch,
        latencyThresholdMs: config.latencyThresholdMs,
        maxTrials: config.maxTrials,
        latencyUs: (r) => stabilizingLatency(r.client, config.percentile),
        interrupt,
      });
      return { ...outcome, server, model };
    } finally {
      load.close();
    }
  } finally {
    await scraper?.close();
    await shared?.release();
    await client.close();
  }
}
