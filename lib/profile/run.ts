/**
 * One profiling run: discover the model, build the requests, sweep the load
 * levels. Returns data; printing and exit codes belong to main.ts.
 */
import { type ProfileConfig, UsageError } from "../cli/config.ts";
import type { OutputCheck } from "../input/validation.ts";
import { sweep, type SweepOutcome } from "../load/sweep.ts";
import { measureLevel } from "../measure/level.ts";
import type { ClientSummary, LevelResult, WindowData } from "../measure/types.ts";
import { KServeHttpClient } from "../protocol/kserve_http.ts";
import { GrpcClient } from "../protocol/grpc/client.ts";
import { PeriodicLoad } from "../load/periodic.ts";
import { Recorder } from "../measure/recorder.ts";
import { REPORTED_PERCENTILES, summarizeClient } from "../measure/stats.ts";
import { grpcTls, httpsTls } from "./tls.ts";
import {
  hasStatistics,
  type InferenceClient,
  type InferRequest,
  type ModelInfo,
  type ModelStatistics,
  type PreparedRequest,
  type ServerInfo,
} from "../protocol/types.ts";
import { batchRequest, buildRequests, type RequestPlan } from "./inputs.ts";
import { planLoad } from "./loads.ts";
import type { Interrupt } from "./interrupt.ts";
import { MetricsScraper } from "../measure/metrics_scraper.ts";
import type { RequestSink } from "../measure/types.ts";
import { reportedWindows } from "../report/components.ts";

export interface RunEvents {
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
}

/** A RequestSink that also sees, through the client it wraps, what each request sent and got. */
export interface RequestTracer extends RequestSink {
  wrapClient<C extends InferenceClient>(client: C): C;
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

/** Live counters for a progress display, read on a timer outside the load loop. */
export interface Progress {
  level: number;
  window: number;
}

/** The latency a level is judged by: the chosen percentile, else the average. */
export function stabilizingLatency(client: ClientSummary, percentile?: number): number {
  return percentile === undefined ? client.avgLatencyUs : client.percentilesUs.get(percentile)!;
}

/** The KServe client of -i: HTTP (with --ssl-https-*) or gRPC (with --ssl-grpc-*). */
export function createClient(config: ProfileConfig): InferenceClient {
  const timeout = config.requestTimeoutMs > 0 ? { requestTimeoutMs: config.requestTimeoutMs } : {};
  try {
    if (config.protocol === "grpc") {
      return new GrpcClient({
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

/** The request with the --request-parameter values added. */
function withParameters(request: InferRequest, config: ProfileConfig): InferRequest {
  if (config.requestParameters.length === 0) return request;
  const parameters = { ...request.parameters };
  for (const p of config.requestParameters) parameters[p.name] = p.value;
  return { ...request, parameters };
}

/**
 * Periodic concurrency mode: one experiment instead of a sweep; its result
 * covers every request of the pattern as one window.
 */
async function runPeriodic(
  client: InferenceClient,
  options: {
    config: ProfileConfig;
    requests: PreparedRequest[];
    interrupt: Interrupt;
    sink?: RequestSink;
  },
): Promise<LevelResult> {
  const { config, interrupt } = options;
  const periodic = config.periodic!;
  const recorder = new Recorder({ sink: options.sink });
  const load = new PeriodicLoad(client, { ...periodic, requests: options.requests });
  recorder.rotate();
  await interrupt.race(load.run(recorder));
  const window = recorder.rotate();
  const percentiles = config.percentile === undefined ? [] : [config.percentile];
  return {
    mode: "concurrency",
    value: periodic.range.end,
    client: summarizeClient([window], {
      batchSize: config.batchSize,
      percentiles: [...REPORTED_PERCENTILES, ...percentiles],
    }),
    stable: true,
    windows: [window],
  };
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

/**
 * The requests of each input-data stream for sequence models: nested data
 * streams are played back one per sequence, any other data forms one stream.
 */
function sequenceStreams(
  model: ModelInfo,
  options: { plan: RequestPlan; tolerance: number },
): InferRequest[][] {
  const { plan, tolerance } = options;
  if (!model.sequence || plan.dataSet.streams.length < 2) return [plan.requests];
  return plan.dataSet.streams.map((steps) =>
    steps.map((step) => batchRequest(model, [step], { tolerance }).request)
  );
}

export async function runProfile(
  config: ProfileConfig,
  options: { interrupt: Interrupt; events?: RunEvents; client?: InferenceClient },
): Promise<RunOutcome> {
  const { interrupt, events = {} } = options;
  const tracer = events.requests;
  const base = options.client ?? createClient(config);
  const client = tracer ? tracer.wrapClient(base) : base;
  // Scraping runs on its own timer, started once the model is known; levels take its samples.
  const scraper = config.collectMetrics
    ? new MetricsScraper(config.metricsUrl, {
      intervalMs: config.metricsIntervalMs,
      onWarning: (message) => events.warning?.(message),
    })
    : undefined;
  try {
    const server = await client.serverInfo();
    const model = await client.modelInfo(config.model, config.modelVersion);
    const plan = await buildRequests(model, config);
    const requests = plan.requests.map((r) =>
      client.prepare(withParameters(r, config), {
        model: config.model,
        version: config.modelVersion,
      })
    );
    const checks = new Map<PreparedRequest, OutputCheck>();
    plan.checks?.forEach((check, i) => check && checks.set(requests[i], check));
    events.ready?.({ server, model });
    scraper?.start();
    const statistics = statisticsSource(client, { server, model, config });
    if (config.periodic !== undefined) {
      events.levelStart?.(config.periodic.range.end);
      const result = withMetrics(
        await runPeriodic(client, { config, requests, interrupt, sink: tracer }),
        scraper,
      );
      events.window?.(result.windows[0], { level: result.value, index: 0 });
      events.level?.(result);
      return { results: [result], server, model };
    }
    const load = await planLoad(client, {
      config,
      model,
      streams: sequenceStreams(model, { plan, tolerance: config.validationTolerance }).map((s) =>
        s.map((r) => withParameters(r, config))
      ),
      prepared: requests,
      checks,
    });
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
    await client.close();
  }
}
