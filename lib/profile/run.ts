/**
 * One profiling run: discover the model, build the requests, sweep the load
 * levels. Returns data; printing and exit codes belong to main.ts.
 */
import { loadTokenizer } from "../input/tokenizer.ts";
import { type LoadThreads, partThreads, planLoad } from "../load/levels.ts";
import { type Part, shareAmong } from "../load/split.ts";
import { searchCapacity } from "../load/capacity.ts";
import { sweep, type SweepOutcome } from "../load/sweep.ts";
import type { Interrupt } from "../measure/interrupt.ts";
import {
  type LevelCoordinator,
  type LevelOptions,
  measureLevel,
  NoValidRequestsError,
  SweepEndedError,
} from "../measure/level.ts";
import { llmMetricsUrl, MetricsScraper } from "../measure/metrics_scraper.ts";
import { stabilizingLatency } from "../measure/stability.ts";
import { buildServiceRequests, createClient } from "../protocol/kinds/mod.ts";
import { hasStatistics, type InferenceClient, type TraceSettings } from "../protocol/types.ts";
import { reportedWindows } from "../report/components.ts";
import type { RequestTracer } from "../report/export.ts";
import type { ModelInfo, ModelStatistics, ServerInfo } from "../types/model.ts";
import type { CapacityReport, Histogram, LevelResult, WindowData } from "../types/results.ts";
import {
  CapacityCheckpoint,
  capacityReport,
  FailedRequestGate,
  judgeLevel,
  thresholdBreaches,
} from "./capacity.ts";
import { loadInputs } from "./inputs.ts";
import { discoverModel } from "./model.ts";
import { runPeriodic } from "./periodic.ts";
import type { ProfilePlan } from "./plan.ts";
import { runSessions } from "./sessions.ts";
import { openSharedMemory, type SharedMemorySession } from "./shared_memory.ts";
import { updateTraceSettings } from "./trace.ts";

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
  /** The level's requests completed so far in its current window, read by a progress timer. */
  live?(completed: () => number): void;
  /** Something the user should know that does not stop the run. */
  warning?(message: string): void;
  /** Sees every request of the run (the profile export). */
  requests?: RequestTracer;
  /** Makes each window's latency histogram, for the reports that carry them. */
  newHistogram?: () => Histogram;
}

/**
 * `result` with what the server's metrics say of the windows it reports: GPU
 * metrics (--collect-metrics), an LLM server's token counters and load.
 */
function withMetrics(
  result: LevelResult,
  scraper: MetricsScraper | undefined,
  options: { gpu: boolean },
): LevelResult {
  const windows = reportedWindows(result);
  if (scraper === undefined || windows.length === 0) return result;
  const from = windows[0].startMs;
  const to = windows[windows.length - 1].endMs;
  const llmServer = result.llm ? scraper.takeLlm(from, to) : undefined;
  const metrics = scraper.take(from, to);
  // A level that no scrape reached while the endpoint fails says why it has no metrics.
  const unavailable = options.gpu && !metrics ? scraper.failure : undefined;
  return {
    ...result,
    ...(metrics && options.gpu ? { metrics } : {}),
    ...(unavailable ? { metricsUnavailable: unavailable } : {}),
    ...(llmServer ? { llmServer } : {}),
  };
}

/**
 * The scraper of the run: --collect-metrics's, else for OpenAI-compatible
 * servers their own /metrics when they have one (llama.cpp --metrics, vLLM,
 * SGLang); undefined otherwise.
 */
async function startScraper(
  config: ProfilePlan,
  options: { warning?: (message: string) => void },
): Promise<MetricsScraper | undefined> {
  const llm = config.serviceKind === "openai";
  if (!config.collectMetrics && !llm) return undefined;
  const scraper = new MetricsScraper(
    config.collectMetrics ? config.metricsUrl : llmMetricsUrl(config.url),
    { intervalMs: config.metricsIntervalMs, onWarning: (m) => options.warning?.(m) },
  );
  if (config.collectMetrics) {
    await scraper.start({ strict: config.requireMetrics });
    return scraper;
  }
  try {
    await scraper.start();
    if (scraper.llmServer) return scraper;
  } catch {
    // A server without metrics: its LLM figures are simply absent.
  }
  // Nor is a server whose metrics hold no LLM figures scraped again.
  await scraper.close();
  return undefined;
}

/** --enable-mpi: how this process takes part in the job. */
export interface RankRole {
  coordinator: LevelCoordinator;
  /** --shard: this rank's part of the load (rank 0 queries the server's statistics). */
  part?: Part;
}

export interface RunOutcome extends SweepOutcome {
  server: ServerInfo;
  model: ModelInfo;
  /** --search-recipe: the answer. */
  capacity?: CapacityReport;
  /** A CI gate breached (--threshold, --failed-request-threshold): each breach, in words. */
  breaches?: string[];
}

/** Statistics of the profiled model and its composing models, when the server offers them. */
function statisticsSource(
  client: InferenceClient,
  options: { server: ServerInfo; model: ModelInfo; config: ProfilePlan },
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

/** OpenAI runs: the tokenizer and goodput objectives of their LLM summaries. */
async function tokenSummaryOptions(
  config: ProfilePlan,
): Promise<LevelOptions["tokens"] | undefined> {
  if (config.serviceKind !== "openai") return undefined;
  const tokenizer = await loadTokenizer(config.tokenizer);
  return {
    goodput: config.goodput,
    sliceMs: config.sliceDurationMs,
    ...(tokenizer ? { tokenizer } : {}),
  };
}

/** --workers N > 1: the threads that drive the load, loaded only then. */
async function openWorkers(
  config: ProfilePlan,
  options: { model: ModelInfo; tracer?: RequestTracer },
): Promise<LoadThreads> {
  const { WorkerPool } = await import("./workers/pool.ts");
  return await WorkerPool.open(config, options);
}

/**
 * --shard: the requests of a count window this rank waits for, its share
 * among the ranks that send at this level (a closed loop below one lane per
 * rank leaves some ranks idle).
 */
function shardedCount(
  count: number,
  part: Part,
  level: { closed: boolean; value: number },
): number {
  return shareAmong(count, part, level.closed ? Math.min(level.value, part.count) : part.count);
}

export async function runProfile(
  config: ProfilePlan,
  options: {
    interrupt: Interrupt;
    events?: RunEvents;
    client?: InferenceClient;
    rank?: RankRole;
    /** --search-recipe: the levels measured so far (opened from the plan when not given). */
    checkpoint?: CapacityCheckpoint;
  },
): Promise<RunOutcome> {
  const { interrupt, events = {}, rank } = options;
  const part = rank?.part;
  // A checkpoint of another search is refused before anything connects.
  const checkpoint = options.checkpoint ??
    (config.capacity ? CapacityCheckpoint.open(config) : undefined);
  const tracer = events.requests;
  const base = options.client ?? await createClient(config);
  const client = tracer ? tracer.wrapClient(base) : base;
  // Scraping runs on its own timer, started (and its endpoint checked) once the model is known;
  // levels take its samples.
  let scraper: MetricsScraper | undefined;
  let shared: SharedMemorySession | undefined;
  try {
    const server = await client.serverInfo();
    const trace = await updateTraceSettings(client, { config, server });
    if (trace) events.traceSettings?.(trace);
    const model = await discoverModel(client, {
      model: { name: config.model, version: config.modelVersion },
      composing: config.composingModels,
    });
    const plan = await buildServiceRequests(model, config);
    // Every request is built from the plan's tensor data, so the plan's requests place them all.
    shared = await openSharedMemory(client, { config, server, model, requests: plan.requests });
    const inputs = loadInputs(client, { config, model, plan, place: shared?.place.bind(shared) });
    scraper = await startScraper(config, { warning: events.warning });
    events.ready?.({ server, model });
    // Sharded, the server's statistics already count every rank's requests.
    const statistics = (part?.index ?? 0) === 0
      ? statisticsSource(client, { server, model, config })
      : undefined;
    // Modes measured as one level of one window, outside the level loop.
    const oneLevel = async (value: number, run: () => Promise<LevelResult>) => {
      events.levelStart?.(value);
      const result = withMetrics(await run(), scraper, { gpu: config.collectMetrics });
      events.window?.(result.windows[0], { level: result.value, index: 0 });
      events.level?.(result);
      return { results: [result], server, model };
    };
    if (config.periodic !== undefined) {
      const periodic = config.periodic;
      return await oneLevel(periodic.range.end, () =>
        runPeriodic(client, {
          ...config,
          periodic,
          requests: inputs.prepared,
          interrupt,
          sink: tracer,
          newHistogram: events.newHistogram,
        }));
    }
    const tokens = await tokenSummaryOptions(config);
    if (config.sessionConcurrency !== undefined) {
      const sessionConcurrency = config.sessionConcurrency;
      return await oneLevel(sessionConcurrency, () =>
        runSessions(client, {
          ...config,
          sessionConcurrency,
          dataSet: plan.dataSet,
          interrupt,
          sink: tracer,
          newHistogram: events.newHistogram,
          ...(tokens ? { tokens } : {}),
        }));
    }
    const levels = { plan: config, model, ...inputs };
    const load = await planLoad(client, {
      ...levels,
      ...(part !== undefined
        ? { threads: () => partThreads(client, { ...levels, part }) }
        : config.workers > 1
        ? { threads: () => openWorkers(config, { model, tracer }) }
        : {}),
    });
    const measured: LevelResult[] = [];
    // Per-request SLOs of runs without token streaming bound the latency alone.
    const goodLatencyMs = tokens
      ? undefined
      : config.goodput.find((o) => o.metric === "request_latency")?.value;
    const failedGate = config.failedRequestThreshold &&
      new FailedRequestGate(config.failedRequestThreshold);
    const breaches: string[] = [];
    /** A gate ends the run as Ctrl-C does: the level ends after its window, what exists is kept. */
    const breach = (why: string, stop: boolean) => {
      breaches.push(why);
      if (stop && !interrupt.soft) interrupt.trigger();
    };
    const measure = async (value: number) => {
      events.levelStart?.(value);
      const result = withMetrics(
        await measureLevel(load.level(value), {
          ...config,
          mode: load.mode,
          value,
          model: config.model,
          interrupt,
          ...(statistics ? { statistics } : {}),
          ...(scraper && tokens ? { boundary: () => scraper!.scrapeNow() } : {}),
          onWindow: (w, index) => {
            events.window?.(w, { level: value, index });
            const why = failedGate?.add(w);
            if (why && breaches.length === 0) breach(why, true);
          },
          ...(events.live ? { live: events.live } : {}),
          onWarning: (message) => events.warning?.(message),
          requestSink: tracer,
          ...(load.requestCount === undefined ? {} : { requestCount: load.requestCount }),
          ...(load.durationMs === undefined ? {} : { benchmarkDurationMs: load.durationMs }),
          newHistogram: events.newHistogram,
          ...(tokens ? { tokens } : {}),
          ...(goodLatencyMs === undefined ? {} : { goodLatencyMs }),
          ...(rank ? { coordinator: rank.coordinator } : {}),
          ...(part
            ? {
              measurementRequestCount: shardedCount(config.measurementRequestCount, part, {
                closed: load.mode === "concurrency",
                value,
              }),
            }
            : {}),
        }),
        scraper,
        { gpu: config.collectMetrics },
      );
      // A search reports every level it measured: its verdicts rest on each.
      const reported = result.stable || interrupt.soft || checkpoint !== undefined;
      if (reported) events.level?.(result);
      measured.push(result);
      // k6's thresholds judge what is reported: a level that did not settle ends a sweep instead.
      const over = reported ? thresholdBreaches(result, config) : [];
      if (over.length > 0) {
        breach(
          `--threshold breached at ${load.mode.replace("_", " ")} ${value}: ${over.join("; ")}`,
          config.abortOnFail,
        );
      }
      return result;
    };
    const gated = <T extends SweepOutcome>(outcome: T): T & { breaches?: string[] } => {
      if (breaches.length === 0) return outcome;
      const stopped = interrupt.soft && (config.abortOnFail || failedGate !== undefined)
        ? { note: `${breaches.at(-1)}: the run stopped there; what was measured is reported.` }
        : {};
      return { ...outcome, ...stopped, breaches };
    };
    try {
      if (checkpoint) {
        const capacity = config.capacity!;
        const search = await searchCapacity(async (value) => {
          const stored = checkpoint.next(value);
          if (stored === undefined) {
            const result = await measure(value);
            if (!interrupt.soft) checkpoint.add(result);
            return result;
          }
          events.levelStart?.(value);
          events.level?.(stored);
          measured.push(stored);
          return stored;
        }, {
          mode: load.mode === "concurrency" ? "concurrency" : "request_rate",
          range: load.range,
          resolution: capacity.resolution,
          judge: (result) => judgeLevel(result, config),
          interrupt,
        });
        const report = capacityReport(search, {
          plan: config,
          index: (result) => measured.indexOf(result),
        });
        return { ...gated({ results: measured }), capacity: report, server, model };
      }
      const outcome = await sweep(measure, {
        range: load.range,
        binarySearch: config.binarySearch,
        latencyThresholdMs: config.latencyThresholdMs,
        maxTrials: config.maxTrials,
        latencyUs: (r) => stabilizingLatency(r.client, config.percentile),
        interrupt,
      }).catch((error) => {
        if (!(error instanceof SweepEndedError)) throw error;
        return { results: measured, note: error.message };
      });
      return { ...gated(outcome), server, model };
    } catch (error) {
      // A gate that stopped the level can leave it without a valid request: the gate says why.
      if (!(error instanceof NoValidRequestsError) || breaches.length === 0) throw error;
      return { ...gated({ results: measured }), server, model };
    } finally {
      load.close();
    }
  } finally {
    await scraper?.close();
    await shared?.release();
    await client.close();
  }
}
