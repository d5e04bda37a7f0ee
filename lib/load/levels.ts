/**
 * The loads of a run's levels: the pattern of the plan's load mode
 * (modes/mod.ts) driven by a closed loop (concurrency) or an open loop (a
 * schedule), fed with plain requests or, for sequence models, with
 * sequences. A --workers thread runs the same code for its part (planPart);
 * the run passes planLoad the threads that do. The sweep only sees
 * `level(value)`.
 */
import { InputError } from "../input/errors.ts";
import { mulberry32 } from "../input/generate.ts";
import type { PlannedRequest } from "../input/requests.ts";
import type { OutputCheck } from "../input/validation.ts";
import type { LevelLoad } from "../measure/level.ts";
import type { MeasurementOptions } from "../measure/plan.ts";
import type { RequestRecorder } from "../measure/recorder.ts";
import type { ClientPlan } from "../protocol/plan.ts";
import type { InferenceClient, PreparedRequest } from "../protocol/types.ts";
import { UsageError } from "../types/errors.ts";
import type { ModelInfo } from "../types/model.ts";
import type { LevelResult, LoadMode } from "../types/results.ts";
import type { AlarmOptions } from "./alarm.ts";
import { ConcurrencyLoad } from "./concurrency.ts";
import { type RequestFeed, RoundRobinFeed } from "./feed.ts";
import { loadMode, type LoadPattern } from "./modes/mod.ts";
import type { LoadPlan } from "./plan.ts";
import type { Range } from "./range.ts";
import { RateLoad } from "./rate.ts";
import { SequenceFeed } from "./sequences.ts";
import {
  type Part,
  share,
  shareAmong,
  shareRange,
  shiftedSchedule,
  strideSchedule,
} from "./split.ts";

/** Seeds of the Poisson gaps and sequence lengths: runs repeat exactly. */
const SCHEDULE_SEED = 0x5eed;
const SEQUENCE_SEED = 0x5e9;

/** What of a run's plan its loads read: the load part, the target and --request-count. */
export type LevelsPlan =
  & LoadPlan
  & Pick<ClientPlan, "model" | "modelVersion">
  & Pick<MeasurementOptions, "requestCount" | "stallTimeoutMs" | "warmupRequestCount">;

/** The loads of a run's levels. */
export interface LevelLoads {
  mode: LoadMode;
  /** The levels to sweep: concurrencies or request rates. */
  range: Range;
  level(value: number): LevelLoad;
  /** --fixed-schedule: each level is one window of exactly this many requests. */
  requestCount?: number;
  /** Stages: each level is one window of this many milliseconds. */
  durationMs?: number;
  close(): void;
}

/** What a load sends: the requests prepared by the client that sends them. */
export interface LoadInputs {
  /**
   * The requests of each input-data stream with their checks (sequence models
   * prepare them per sequence; several streams are played back one per sequence).
   */
  streams: readonly (readonly PlannedRequest[])[];
  /** The same requests prepared, for models without sequences. */
  prepared: readonly PreparedRequest[];
  /** Output validation of prepared requests. */
  checks?: ReadonlyMap<PreparedRequest, OutputCheck>;
  /** --fixed-schedule: when each send is due, ms from the start of the load. */
  timestampsMs?: readonly number[];
}

export interface LevelsOptions extends LoadInputs {
  plan: LevelsPlan;
  model: ModelInfo;
}

/**
 * What drives the levels instead of this thread's own load: the --workers
 * threads, or (--enable-mpi --shard) this rank's part of a load split across
 * processes (partThreads).
 */
export interface LoadThreads {
  level(value: number): LevelLoad;
  close(): void;
}

/**
 * The one line that ends a run with open-loop levels behind schedule (their
 * send-lag p99 over --max-send-lag): an error when the plan fails such runs
 * (exit code 2, main.ts), else a warning, as perf_analyzer only warns.
 */
export function behindScheduleMessage(
  results: readonly LevelResult[],
  config: Pick<LoadPlan, "sendLagFails" | "maxSendLagMs">,
): string | undefined {
  const late = results.filter((r) => r.openLoop?.behindSchedule);
  if (late.length === 0) return undefined;
  const worst = Math.max(...late.map((l) => l.openLoop!.sendLagP99Us));
  return `${late.length} load ${late.length === 1 ? "level is" : "levels are"} behind ` +
    `schedule: the p99 send lag (up to ${Math.round(worst)} usec) exceeded --max-send-lag ` +
    `${config.maxSendLagMs} msec, so latencies from the send understate the server's (the ` +
    "corrected ones include the lag). Lower the rate or raise --max-inflight" +
    (config.sendLagFails
      ? ", or pass --ignore-send-lag to accept the results."
      : "; pass --max-send-lag MS to fail such runs.");
}

/**
 * Sequence ids must outnumber the live sequences (and, with --workers, the
 * workers, which take disjoint slices of the range); open-loop workers each
 * play at least one of the --num-of-sequences.
 */
function checkSequences(config: LoadPlan, model: ModelInfo): void {
  if (!model.sequence) return;
  const { start, end } = config.sequences.idRange;
  const live = config.loadMode === "concurrency"
    ? Math.max(
      config.concurrency.start,
      config.concurrency.end,
      ...(config.stages ?? []).map((s) => s.target),
    )
    : config.sequences.count;
  const needed = Math.max(live, config.workers);
  if (end - start + 1 < needed) {
    throw new InputError(
      `--sequence-id-range ${start}:${end} has ${end - start + 1} ids, but ${live} sequences ` +
        `run at once${needed > live ? ` on ${config.workers} workers` : ""}`,
    );
  }
  if (config.loadMode !== "concurrency" && config.sequences.count < config.workers) {
    throw new UsageError([
      `Option --workers ${config.workers} needs --num-of-sequences >= ${config.workers} on ` +
      "a sequence model: each worker plays its own sequences",
    ]);
  }
}

function createFeed(client: InferenceClient, options: LevelsOptions): RequestFeed {
  const { plan, model, streams } = options;
  const target = { model: plan.model, version: plan.modelVersion };
  if (!model.sequence) return new RoundRobinFeed(options.prepared, options.checks);
  const validated = streams.some((s) => s.some((p) => p.check !== undefined));
  return new SequenceFeed(
    streams.map((s) => s.map((p) => p.request)),
    (r) => client.prepare(r, target),
    {
      ...plan.sequences,
      rng: mulberry32(SEQUENCE_SEED),
      ...(validated ? { checks: streams.map((s) => s.map((p) => p.check)) } : {}),
    },
  );
}

async function patternOf(options: LevelsOptions): Promise<LoadPattern> {
  const { plan, timestampsMs } = options;
  return await loadMode(plan.loadMode).pattern(plan, {
    requestCount: plan.requestCount,
    warmupRequestCount: plan.warmupRequestCount,
    ...(timestampsMs === undefined ? {} : { timestampsMs }),
  });
}

/** The loads of the run's levels; `threads` opens the --workers threads that drive them. */
export async function planLoad(
  client: InferenceClient,
  options: LevelsOptions & { threads?: () => Promise<LoadThreads> },
): Promise<LevelLoads> {
  const { plan, model } = options;
  checkSequences(plan, model);
  const pattern = await patternOf(options);
  const levels = {
    mode: loadMode(plan.loadMode).reportAs,
    range: pattern.range,
    ...(pattern.requestCount === undefined ? {} : { requestCount: pattern.requestCount }),
    ...(pattern.durationMs === undefined ? {} : { durationMs: pattern.durationMs }),
  };
  if (options.threads) {
    const threads = await options.threads();
    return { ...levels, level: (value) => threads.level(value), close: () => threads.close() };
  }
  const feed = createFeed(client, options);
  const schedule = pattern.schedule;
  const prefill = plan.prefillConcurrency === undefined ? {} : {
    prefill: plan.prefillConcurrency,
    ...(plan.prefillRampMs === undefined ? {} : { prefillRampMs: plan.prefillRampMs }),
  };
  if (schedule === undefined) {
    const load = new ConcurrencyLoad(client, {
      feed,
      stallMs: plan.stallTimeoutMs,
      ...(plan.cancellation ? { cancellation: plan.cancellation } : {}),
      ...prefill,
    });
    const steps = pattern.steps;
    return {
      ...levels,
      level: (value) => ({
        start: (o) => load.start(value, steps ? { ...o, steps: steps(value) } : o),
        stop: () => load.stop(),
        drained: () => load.drained(),
        cancelInflight: () => load.cancelInflight(),
      }),
      close: () => load.close(),
    };
  }
  const load = new RateLoad(client, {
    feed,
    maxInflight: plan.maxInflight,
    serialSequences: plan.sequences.serial,
    stallMs: plan.stallTimeoutMs,
    batchMs: plan.sendBatchMs,
    ...(plan.cancellation ? { cancellation: plan.cancellation } : {}),
    ...prefill,
    ...(plan.capRampMs === undefined ? {} : { capRampMs: plan.capRampMs }),
  });
  const rng = mulberry32(SCHEDULE_SEED);
  return {
    ...levels,
    level: (value) => ({
      prepare: () => load.prepare(),
      start: (o) => load.start(schedule(value, rng), o),
      stop: () => load.stop(),
      drained: () => load.drained(),
      cancelInflight: () => load.cancelInflight(),
    }),
    close: () => load.close(),
  };
}
/** One start of a worker's part of the load; limits and counts are the whole load's. */
export interface PartStart {
  /** The level: concurrency or request rate. */
  value: number;
  /** Requests of the whole load (all workers); absent: until stopped. */
  limit?: number;
  /** Open loop: when the schedule starts, on this thread's clock, the same instant in every worker. */
  startMs: number;
  /**
   * Starts so far (warmups included), the same in every worker: a level's
   * Poisson gaps are drawn from a generator seeded with it, so that all
   * workers walk the same schedule.
   */
  serial: number;
}

/** A worker thread's part of the load. */
export interface PartLoad {
  start(level: PartStart, recorder: RequestRecorder): void;
  stop(): Promise<void>;
  drained(): Promise<void>;
  close(): void;
}

/**
 * The load of worker `part` of --workers: its share of the concurrency (its
 * lanes are its own sequences, with ids from its slice of
 * --sequence-id-range), or every part.count-th send of the open-loop
 * schedule from the part.index-th, with its share of --max-inflight and of
 * --num-of-sequences. Request limits are split so that the total is exact.
 */
export async function planPart(
  client: InferenceClient,
  options: LevelsOptions & { part: Part; alarm?: AlarmOptions },
): Promise<PartLoad> {
  const { plan, part } = options;
  const sequences = {
    ...plan.sequences,
    count: Math.max(1, share(plan.sequences.count, part)),
    idRange: shareRange(plan.sequences.idRange, part),
  };
  const feed = createFeed(client, { ...options, plan: { ...plan, sequences } });
  const { schedule } = await patternOf(options);
  if (schedule === undefined) {
    const load = new ConcurrencyLoad(client, {
      feed,
      stallMs: plan.stallTimeoutMs,
      ...(plan.cancellation ? { cancellation: plan.cancellation } : {}),
    });
    return {
      start: ({ value, limit }, recorder) => {
        // Workers without lanes at this level send nothing, so the others share the limit.
        load.start(share(value, part), {
          recorder,
          ...(limit === undefined
            ? {}
            : { limit: shareAmong(limit, part, Math.min(value, part.count)) }),
        });
      },
      stop: () => load.stop(),
      drained: () => load.drained(),
      close: () => load.close(),
    };
  }
  const load = new RateLoad(client, {
    feed,
    maxInflight: share(plan.maxInflight, part),
    serialSequences: plan.sequences.serial,
    stallMs: plan.stallTimeoutMs,
    batchMs: plan.sendBatchMs,
    ...(plan.cancellation ? { cancellation: plan.cancellation } : {}),
    ...(options.alarm ? { alarm: options.alarm } : {}),
  });
  await load.prepare();
  return {
    start: ({ value, limit, startMs, serial }, recorder) => {
      const own = strideSchedule(schedule(value, mulberry32(SCHEDULE_SEED + serial)), part);
      load.start(shiftedSchedule(own, startMs - performance.now()), {
        recorder,
        ...(limit === undefined ? {} : { limit: share(limit, part) }),
      });
    },
    stop: () => load.stop(),
    drained: () => load.drained(),
    close: () => load.close(),
  };
}

/**
 * The levels of one part driven from this thread (--enable-mpi --shard: this
 * rank's part of a load split across processes as --workers splits it across
 * threads). Every part starts at the same moment (the ranks leave a barrier
 * together) and counts its starts alike, so that all walk the same schedule.
 */
export async function partThreads(
  client: InferenceClient,
  options: LevelsOptions & { part: Part },
): Promise<LoadThreads> {
  const load = await planPart(client, options);
  let serial = 0;
  return {
    level: (value) => ({
      start: ({ recorder, limit }) =>
        load.start({
          value,
          ...(limit === undefined ? {} : { limit }),
          startMs: performance.now(),
          serial: ++serial,
        }, recorder),
      stop: () => load.stop(),
      drained: () => load.drained(),
    }),
    close: () => load.close(),
  };
}
