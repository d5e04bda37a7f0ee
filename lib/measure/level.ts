/**
 * Measures one load level: optional warmup, then back-to-back windows until
 * the last three are stable (perf_analyzer's rule) or max trials run out.
 */
import type { ModelStatistics } from "../types/model.ts";
import type { Interrupt } from "./interrupt.ts";
import type { Histogram } from "../types/results.ts";
import { summarizeOpenLoop } from "./open_loop.ts";
import { Recorder } from "./recorder.ts";
import { abandonedMessage, settledOrStalled } from "./stall.ts";
import { summarizeTokens, type TokenSummaryOptions } from "./tokens.ts";
import {
  isStable,
  STABILITY_WINDOWS,
  stabilizingLatencyUs,
  windowThroughput,
} from "./stability.ts";
import { pooledErrors, statisticsDelta, summarizeClient, summarizeServer } from "./stats.ts";
import type { LevelResult, LoadMode, Samples, WindowData } from "../types/results.ts";
import type { MeasurementOptions } from "./plan.ts";
import type { RequestSink } from "../types/timing.ts";

/** What the level loop needs from a load mode. */
export interface LevelLoad {
  /** Work before the level's first window, e.g. opening connections so that sends do not wait. */
  prepare?(): Promise<void>;
  start(options: { recorder: Recorder; limit?: number }): void;
  stop(): Promise<void>;
  /** Resolves when a load started with `limit` has completed every request. */
  drained(): Promise<void>;
  /** Ends every request in flight as cancelled (the end of --benchmark-grace-period). */
  cancelInflight?(): void;
}

/** What the ranks of an MPI job (--enable-mpi) agree on after a window. */
export interface Verdict {
  stable: boolean;
  stop: boolean;
}

/**
 * How the ranks of an MPI job measure a level together. Each call is a
 * collective: every rank makes it at the same point of the level.
 */
export interface LevelCoordinator {
  /** The level starts on every rank (throws when another rank's sweep is over). */
  begin(): Promise<void>;
  /** Just before the first window: the windows end at the same times on every rank from here. */
  ready(): Promise<void>;
  /**
   * A --request-count window drained on this rank: resolves once every rank
   * that shares the load (--shard) has drained too, so that the server's
   * statistics read next count all of the window's requests.
   */
  drained(): Promise<void>;
  /** The window stability judges: this rank's own, or (--shard) every rank's merged. */
  window(window: WindowData): Promise<WindowData>;
  /** Stable when every rank is, stop when any rank stops (perf_analyzer's multi-model rule). */
  agree(verdict: Verdict): Promise<Verdict>;
}

/** Another rank's sweep is over (LevelCoordinator.begin), so this rank's ends before this level. */
export class SweepEndedError extends Error {
  override name = "SweepEndedError";
  constructor() {
    super("Another MPI rank finished its sweep: reporting the levels measured so far.");
  }
}

export interface LevelOptions extends MeasurementOptions {
  mode: LoadMode;
  value: number;
  /** Server statistics snapshot for the profiled and composing models, if available. */
  statistics?: () => Promise<ModelStatistics[]>;
  /**
   * Called right before a --request-count window starts and right after it
   * ends (the LLM server's metrics are scraped there, so counters cover it exactly).
   */
  boundary?: () => Promise<void>;
  /** Called after every window (verbose output, progress). */
  onWindow?: (window: WindowData, index: number) => void;
  /** Called once, at the start: how many requests the current window completed so far. */
  live?: (completed: () => number) => void;
  /** The profiled model's name: its server summary comes first. */
  model: string;
  interrupt: Interrupt;
  /** Receives every completed request, warmup included (the profile export). */
  requestSink?: RequestSink;
  /** Makes each window's latency histogram (for exports); without it windows have none. */
  newHistogram?: () => Histogram;
  /** Open-loop modes: --max-send-lag, the send-lag p99 above which a level is behind schedule. */
  maxSendLagMs?: number;
  /** Token-streaming runs: the tokenizer and --goodput objectives of the LLM summary. */
  tokens?: Omit<TokenSummaryOptions, "percentiles">;
  /** Other runs: a per-request SLO on latency (ms); the requests within it are counted good. */
  goodLatencyMs?: number;
  /** --enable-mpi: the other ranks' windows and stability. */
  coordinator?: LevelCoordinator;
  /**
   * -a/--async (or --streaming): as in perf_analyzer, a level whose throughput
   * settled but whose latency did not counts as stable, with a warning.
   */
  async?: boolean;
  /** Prints a warning (on stderr, between windows). */
  onWarning?: (message: string) => void;
  /** count_windows: how often the count is checked, ms (COUNT_CHECK_MS unless a test sets it). */
  countCheckMs?: number;
}

/**
 * count_windows: as perf_analyzer, which sleeps a second between checks of
 * the count, a window ends at the first whole number of these (at least one)
 * by which it holds --measurement-request-count requests. So a window of 50
 * requests of a fast model (10 ms at 5,000 infer/s) lasts a second, long
 * enough to stabilize, and a slow one's a whole number of seconds.
 */
export const COUNT_CHECK_MS = 1000;

/** The --max-send-lag default: perf_analyzer's bound for a "delayed" send. */
export const DEFAULT_MAX_SEND_LAG_MS = 1;

/**
 * Windows in a row without a successful request that end the level. One
 * alone (perf_analyzer's rule) would end a sweep at a server's restart; three,
 * the stability rule's span, tell a server gone for good.
 */
export const MAX_EMPTY_WINDOWS = STABILITY_WINDOWS;

/** The level's windows had no successful request: perf_analyzer's exit code 3. */
export class NoValidRequestsError extends Error {
  override name = "NoValidRequestsError";
  constructor(readonly data: WindowData) {
    const top = [...data.errors].sort((a, b) => b[1] - a[1])[0];
    super(
      "No valid requests recorded within time interval. Please use a larger time window." +
        (top ? ` ${data.errorCount} requests failed, most with: ${top[0]}` : ""),
    );
  }
}

/** Merges `merged` (the stable windows) into a result that keeps `all` windows for exports. */
function summarize(
  merged: WindowData[],
  all: WindowData[],
  options: LevelOptions & { stable: boolean },
): LevelResult {
  // Each summary adds perf_analyzer's percentiles to these.
  const percentiles = options.percentile === undefined ? [] : [options.percentile];
  const deltas = merged.map((w) => w.serverStats).filter((s) => s !== undefined);
  const llm = summarizeTokens(merged, { ...options.tokens, percentiles });
  if (llm && merged.length > 1) {
    for (const w of merged) {
      w.llm = summarizeTokens([w], { ...options.tokens, percentiles, sliceMs: 0 });
    }
  }
  const client = summarizeClient(merged, { batchSize: options.batchSize, percentiles });
  // Figures come from the stable windows, but a failure in any window of the
  // level happened: an outage before the level settled must still be reported.
  if (options.goodLatencyMs !== undefined && !llm) {
    client.goodCount = countWithin(merged, options.goodLatencyMs * 1000);
  }
  return {
    mode: options.mode,
    value: options.value,
    client: { ...client, ...pooledErrors(all) },
    server: deltas.length === merged.length && deltas.length > 0
      ? summarizeServer(deltas, { model: options.model })
      : undefined,
    stable: options.stable,
    windows: all,
    ...(options.mode === "concurrency" ? {} : {
      openLoop: summarizeOpenLoop(merged, {
        percentiles,
        maxSendLagMs: options.maxSendLagMs ?? DEFAULT_MAX_SEND_LAG_MS,
      }),
    }),
    ...(llm ? { llm } : {}),
  };
}

/** Valid requests of `windows` whose latency is at most `boundUs`. */
function countWithin(windows: readonly WindowData[], boundUs: number): number {
  let count = 0;
  for (const w of windows) {
    for (let i = 0; i < w.latenciesUs.length; i++) if (w.latenciesUs[i] <= boundUs) count++;
  }
  return count;
}

const NO_SAMPLES: Samples = [];

/**
 * Drops a window's exact samples (8 bytes per request and array) once no
 * summary needs them, so memory is bounded by the level, not the run. The
 * reports that read per-window latencies (export, summary JSON, HTML) read
 * the window's histogram, which runs with those reports record.
 */
function releaseSamples(window: WindowData): void {
  window.latenciesUs = NO_SAMPLES;
  window.correctedLatenciesUs = NO_SAMPLES;
  window.sendLagsUs = NO_SAMPLES;
  window.tokens = undefined;
}

/** `result` after its windows' exact samples were released. */
function released(result: LevelResult): LevelResult {
  result.windows.forEach(releaseSamples);
  return result;
}

async function snapshot(options: LevelOptions): Promise<ModelStatistics[] | undefined> {
  if (!options.statistics) return undefined;
  try {
    return await options.statistics();
  } catch {
    // Statistics are an optional extra: a failed scrape leaves this window without server data.
    return undefined;
  }
}

/** perf_analyzer's rule over the last three windows of `windows` (throughput only: `checkLatency` false). */
function stableWindows(
  windows: readonly WindowData[],
  options: LevelOptions & { checkLatency?: boolean },
): boolean {
  const recent = windows.slice(-STABILITY_WINDOWS);
  return recent.length === STABILITY_WINDOWS && isStable(
    recent.map((w) => ({
      throughput: windowThroughput(w, options.batchSize),
      latencyUs: stabilizingLatencyUs(w, options.percentile),
    })),
    { stabilityPercentage: options.stabilityPercentage, checkLatency: options.checkLatency },
  );
}

/**
 * AIPerf's --benchmark-duration: sends for that long, then gives the
 * requests in flight --benchmark-grace-period to end; those still in flight
 * then are cancelled (counted apart). A finished schedule ends it sooner.
 */
async function runFor(load: LevelLoad, options: LevelOptions): Promise<void> {
  const { interrupt } = options;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const after = (ms: number) => new Promise<void>((r) => timer = setTimeout(r, ms));
  await interrupt.race(Promise.race([load.drained(), after(options.benchmarkDurationMs)]));
  clearTimeout(timer);
  const stopped = load.stop();
  const graceOver = await interrupt.race(
    Promise.race([stopped.then(() => false), after(options.benchmarkGraceMs).then(() => true)]),
  );
  clearTimeout(timer);
  if (graceOver !== false) load.cancelInflight?.();
  await interrupt.race(stopped);
}

/**
 * Runs the level. Returns the merged result of the stable windows (or of the
 * last ones, `stable: false`); throws NoValidRequestsError after
 * MAX_EMPTY_WINDOWS empty windows in a row, or when the last window is empty.
 * A soft interrupt ends the level after the current window.
 */
export async function measureLevel(load: LevelLoad, options: LevelOptions): Promise<LevelResult> {
  const recorder = new Recorder({ sink: options.requestSink, newHistogram: options.newHistogram });
  options.live?.(() => recorder.completed);
  const { interrupt, coordinator } = options;
  await coordinator?.begin();
  await load.prepare?.();
  let warmupFailures: LevelResult["warmupFailures"];
  const warmupMs = options.warmupDurationMs ?? 0;
  if (options.warmupRequestCount > 0 || warmupMs > 0) {
    const count = options.warmupRequestCount;
    load.start({ recorder, ...(count > 0 ? { limit: count } : {}) });
    if (warmupMs > 0 && options.warmupGraceMs !== undefined) {
      // As a --benchmark-duration window: what the grace period leaves in flight is cancelled.
      await runFor(load, {
        ...options,
        benchmarkDurationMs: warmupMs,
        benchmarkGraceMs: options.warmupGraceMs,
      });
    } else if (warmupMs > 0) {
      // AIPerf's rule: whichever of the count and the duration ends the warmup first.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const over = new Promise<void>((resolve) => timer = setTimeout(resolve, warmupMs));
      await interrupt.race(Promise.race([load.drained(), over]));
      clearTimeout(timer);
    } else {
      await interrupt.race(load.drained());
    }
    await load.stop();
    const warmup = recorder.rotate();
    if (warmup.errorCount > 0) warmupFailures = pooledErrors([warmup]);
  }
  const withWarmup = (result: LevelResult): LevelResult =>
    warmupFailures ? { ...result, warmupFailures } : result;
  if (options.requestCount > 0 || options.benchmarkDurationMs > 0) {
    const before = await snapshot(options);
    await options.boundary?.();
    await coordinator?.ready();
    recorder.rotate();
    if (options.requestCount > 0) {
      load.start({ recorder, limit: options.requestCount });
      await interrupt.race(load.drained());
    } else {
      load.start({ recorder });
      await runFor(load, options);
    }
    const own = recorder.rotate();
    await options.boundary?.();
    await coordinator?.drained();
    // Before the stop, which sends each sequence under way its last request: the server's
    // statistics of the window count the window's requests only.
    const after = await snapshot(options);
    await load.stop();
    if (before && after) own.serverStats = statisticsDelta(before, after);
    const window = coordinator ? await coordinator.window(own) : own;
    options.onWindow?.(window, 0);
    if (window.latenciesUs.length === 0) throw new NoValidRequestsError(window);
    return withWarmup(released(summarize([window], [window], { ...options, stable: true })));
  }

  const windows: WindowData[] = [];
  let emptyInARow = 0;
  let stable = false;
  let failedWindow: WindowData | undefined;
  let before = await snapshot(options);
  await coordinator?.ready();
  recorder.rotate();
  const startMs = performance.now();
  let windowStartMs = startMs;
  load.start({ recorder });
  try {
    for (let trial = 0; trial < options.maxTrials; trial++) {
      if (options.measurementMode === "time_windows") {
        // Ranks end windows on a common grid, whatever the collectives between them took.
        const endMs = startMs + (trial + 1) * options.measurementIntervalMs;
        await interrupt.sleep(
          coordinator ? Math.max(0, endMs - performance.now()) : options.measurementIntervalMs,
        );
      } else {
        await countWindow(recorder, {
          ...options,
          startMs: windowStartMs,
          checkMs: options.countCheckMs ?? COUNT_CHECK_MS,
        });
      }
      const own = recorder.rotate();
      windowStartMs = performance.now();
      const after = await snapshot(options);
      if (before && after) own.serverStats = statisticsDelta(before, after);
      before = after;
      const window = coordinator ? await coordinator.window(own) : own;
      windows.push(window);
      options.onWindow?.(window, trial);
      const empty = window.latenciesUs.length === 0;
      emptyInARow = empty ? emptyInARow + 1 : 0;
      const last = interrupt.soft || trial + 1 === options.maxTrials;
      // A level that ends on an empty window has nothing to report.
      const failed = emptyInARow === MAX_EMPTY_WINDOWS || (empty && last);
      // Every rank learns that one stops (failed, interrupted, out of trials) before it throws.
      const verdict = coordinator && await coordinator.agree({
        stable: emptyInARow === 0 && stableWindows(windows, options),
        stop: failed || last,
      });
      if (failed || (empty && verdict?.stop)) {
        failedWindow = window;
        break;
      }
      // Only the last three windows can still be merged into the result.
      if (windows.length > STABILITY_WINDOWS) {
        releaseSamples(windows[windows.length - 1 - STABILITY_WINDOWS]);
      }
      stable = verdict?.stable ?? (emptyInARow === 0 && stableWindows(windows, options));
      if (stable || verdict?.stop || interrupt.soft) break;
    }
  } finally {
    await interrupt.race(load.stop());
  }
  // Requests given up on at the end were sent during the level: its last window reports them.
  const last = windows.at(-1);
  if (last) addAbandoned(last, recorder.rotate(), options.stallTimeoutMs);
  if (!stable && !interrupt.soft && failedWindow === undefined) {
    // perf_analyzer fails a level that ends unsettled with a window without a valid request among
    // its last three (its exit code 3)...
    failedWindow = windows.slice(-STABILITY_WINDOWS).find((w) => w.latenciesUs.length === 0);
    // ...and in async mode takes a settled throughput alone, warning that latency did not settle.
    if (
      failedWindow === undefined && options.async && stableWindows(windows, {
        ...options,
        checkLatency: false,
      })
    ) {
      stable = true;
      options.onWarning?.(
        "Request latency is not stabilizing. Please try lowering the request rate.",
      );
    }
  }
  if (failedWindow) throw new NoValidRequestsError(failedWindow);
  return withWarmup(released(
    summarize(windows.slice(-STABILITY_WINDOWS), windows, { ...options, stable }),
  ));
}

/**
 * Waits out a count window begun at `startMs`: until the first whole number of
 * `checkMs` (at least one) by which the recorder holds the count. A server
 * that stopped answering ends it short (then empty) instead of never.
 */
async function countWindow(
  recorder: Recorder,
  options: Pick<LevelOptions, "interrupt" | "measurementRequestCount" | "stallTimeoutMs"> & {
    startMs: number;
    checkMs: number;
  },
): Promise<void> {
  const { interrupt, startMs, checkMs } = options;
  let countedMs: number | undefined;
  const counted = recorder.waitForCompleted(options.measurementRequestCount)
    .then(() => countedMs = performance.now());
  const stalled = await interrupt.race(
    settledOrStalled(counted, {
      lastMs: () => recorder.lastCompletedMs,
      stallMs: options.stallTimeoutMs,
    }),
  );
  if (stalled !== false || countedMs === undefined) return;
  const checks = checkMs > 0 ? Math.max(1, Math.ceil((countedMs - startMs) / checkMs)) : 0;
  await interrupt.sleep(Math.max(0, startMs + checks * checkMs - performance.now()));
}

/** Adds the requests that `tail` (what completed after the last window) failed as abandoned. */
function addAbandoned(window: WindowData, tail: WindowData, stallMs: number): void {
  const message = abandonedMessage(stallMs);
  const count = tail.errors.get(message);
  if (count === undefined) return;
  window.errorCount += count;
  window.errors.set(message, (window.errors.get(message) ?? 0) + count);
}
