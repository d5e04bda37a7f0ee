/**
 * Chooses the load of a run from the configuration: a closed loop
 * (concurrency) or an open loop (request rate, custom intervals), fed with
 * plain requests or, for sequence models, with sequences, driven from this
 * thread or (--workers N) from N worker threads, each of which drives its
 * part (planPart). The sweep only sees `level(value)`.
 */
import { type ProfileConfig, UsageError } from "../cli/config.ts";
import type { Range } from "../cli/range.ts";
import { mulberry32 } from "../input/generate.ts";
import { ConcurrencyLoad } from "../load/concurrency.ts";
import { type RequestFeed, RoundRobinFeed } from "../load/feed.ts";
import type { AlarmOptions } from "../load/_alarm.ts";
import { RateLoad } from "../load/rate.ts";
import {
  constantSchedule,
  fixedSchedule,
  fixedScheduleRate,
  intervalSchedule,
  intervalsRate,
  parseIntervals,
  poissonSchedule,
  type Schedule,
} from "../load/schedule.ts";
import { SequenceFeed } from "../load/sequences.ts";
import { type Part, share, shareRange, shiftedSchedule, strideSchedule } from "../load/split.ts";
import type { LevelLoad } from "../measure/level.ts";
import type { RequestTracer } from "./run.ts";
import type { RequestRecorder } from "../measure/recorder.ts";
import type { LevelResult, LoadMode } from "../measure/types.ts";
import type { OutputCheck } from "../input/validation.ts";
import type {
  InferenceClient,
  InferRequest,
  ModelInfo,
  PreparedRequest,
} from "../protocol/types.ts";
import {
  batchRequest,
  InputError,
  type PlannedRequest,
  type RequestPlan,
  scheduleTimestamps,
} from "./inputs.ts";

/** Seeds of the Poisson gaps and sequence lengths: runs repeat exactly. */
const SCHEDULE_SEED = 0x5eed;
const SEQUENCE_SEED = 0x5e9;

export interface LoadPlan {
  mode: LoadMode;
  /** The levels to sweep: concurrencies or request rates. */
  range: Range;
  level(value: number): LevelLoad;
  /** --fixed-schedule: each level is one window of exactly this many requests. */
  requestCount?: number;
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

export interface LoadPlanOptions extends LoadInputs {
  config: ProfileConfig;
  model: ModelInfo;
  /** The profile export, which --workers tells what the workers' clients saw. */
  tracer?: RequestTracer;
  /** --enable-mpi --shard: this rank's part of the load. */
  part?: Part;
}

/** Open-loop levels whose send-lag p99 exceeded --max-send-lag: exit code 4. */
export class SendLagError extends Error {
  override name = "SendLagError";
  constructor(readonly levels: readonly LevelResult[], maxSendLagMs: number) {
    const worst = Math.max(...levels.map((l) => l.openLoop?.sendLagP99Us ?? 0));
    super(
      `${levels.length} load ${levels.length === 1 ? "level is" : "levels are"} untrustworthy: ` +
        `the p99 send lag (up to ${Math.round(worst)} usec) exceeded --max-send-lag ` +
        `${maxSendLagMs} msec, so the client did not send on schedule. Lower the rate, raise ` +
        "--max-inflight, or pass --ignore-send-lag to accept the results.",
    );
  }
}

/** The SendLagError of open-loop levels that sent too late, unless --ignore-send-lag. */
export function sendLagError(
  results: readonly LevelResult[],
  config: ProfileConfig,
): SendLagError | undefined {
  if (config.ignoreSendLag) return undefined;
  const late = results.filter((r) => r.openLoop !== undefined && !r.openLoop.trustworthy);
  return late.length > 0 ? new SendLagError(late, config.maxSendLagMs) : undefined;
}

/** The request with the --request-parameter values added. */
function withParameters(request: InferRequest, config: ProfileConfig): InferRequest {
  if (config.requestParameters.length === 0) return request;
  const parameters = { ...request.parameters };
  for (const p of config.requestParameters) parameters[p.name] = p.value;
  return { ...request, parameters };
}

/**
 * The requests of each input-data stream for sequence models: nested data
 * streams are played back one per sequence, any other data forms one stream.
 */
function sequenceStreams(
  model: ModelInfo,
  options: { plan: RequestPlan; tolerance: number },
): PlannedRequest[][] {
  const { plan, tolerance } = options;
  if (!model.sequence || plan.dataSet.streams.length < 2) {
    return [plan.requests.map((request, i) => ({ request, check: plan.checks?.[i] }))];
  }
  return plan.dataSet.streams.map((steps) =>
    steps.map((step) => batchRequest(model, [step], { tolerance }))
  );
}

/**
 * The requests of `plan` prepared by `client`, with --request-parameter
 * values and, through `place`, their shared-memory placement.
 */
export function loadInputs(
  client: InferenceClient,
  options: {
    config: ProfileConfig;
    model: ModelInfo;
    plan: RequestPlan;
    place?: (request: InferRequest) => InferRequest;
  },
): LoadInputs {
  const { config, model, plan } = options;
  const place = (r: InferRequest) => withParameters(options.place?.(r) ?? r, config);
  const target = { model: config.model, version: config.modelVersion };
  const prepared = plan.requests.map((r) => client.prepare(place(r), target));
  const checks = new Map<PreparedRequest, OutputCheck>();
  plan.checks?.forEach((check, i) => check && checks.set(prepared[i], check));
  const streams = sequenceStreams(model, { plan, tolerance: config.validationTolerance })
    .map((s) => s.map((p) => ({ ...p, request: place(p.request) })));
  return {
    streams,
    prepared,
    checks,
    ...(config.fixedSchedule ? { timestampsMs: scheduleTimestamps(plan.dataSet) } : {}),
  };
}

/**
 * Sequence ids must outnumber the live sequences (and, with --workers, the
 * workers, which take disjoint slices of the range); open-loop workers each
 * play at least one of the --num-of-sequences.
 */
function checkSequences(config: ProfileConfig, model: ModelInfo): void {
  if (!model.sequence) return;
  const { start, end } = config.sequences.idRange;
  const live = config.loadMode === "concurrency"
    ? Math.max(config.concurrency.start, config.concurrency.end)
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

function createFeed(client: InferenceClient, options: LoadPlanOptions): RequestFeed {
  const { config, model, streams } = options;
  const target = { model: config.model, version: config.modelVersion };
  if (!model.sequence) return new RoundRobinFeed(options.prepared, options.checks);
  const validated = streams.some((s) => s.some((p) => p.check !== undefined));
  return new SequenceFeed(
    streams.map((s) => s.map((p) => p.request)),
    (r) => client.prepare(r, target),
    {
      ...config.sequences,
      rng: mulberry32(SEQUENCE_SEED),
      ...(validated ? { checks: streams.map((s) => s.map((p) => p.check)) } : {}),
    },
  );
}

async function readIntervals(path: string): Promise<number[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new InputError(
      `Can not read the --request-intervals file "${path}": ${(error as Error).message}`,
    );
  }
  try {
    return parseIntervals(text, path);
  } catch (error) {
    throw new InputError((error as Error).message);
  }
}

type ScheduleOf = (value: number, rng: () => number) => Schedule;

/** The open-loop schedule of a level and the levels' rate, from the mode's options. */
async function openLoop(
  options: LoadPlanOptions,
): Promise<{ schedule: ScheduleOf; rate: number | undefined }> {
  const { config } = options;
  const intervals = config.requestIntervals === undefined
    ? undefined
    : await readIntervals(config.requestIntervals);
  const fixed = options.timestampsMs;
  return {
    schedule: (value, rng) =>
      fixed !== undefined
        ? fixedSchedule(fixed)
        : intervals !== undefined
        ? intervalSchedule(intervals)
        : config.requestDistribution === "poisson"
        ? poissonSchedule(value, rng)
        : constantSchedule(value),
    rate: fixed !== undefined
      ? fixedScheduleRate(fixed)
      : intervals === undefined
      ? undefined
      : intervalsRate(intervals),
  };
}

export async function planLoad(
  client: InferenceClient,
  options: LoadPlanOptions,
): Promise<LoadPlan> {
  const { config, model } = options;
  const mode = config.loadMode;
  checkSequences(config, model);
  const open = mode === "concurrency" ? undefined : await openLoop(options);
  const fixed = options.timestampsMs;
  const plan = {
    mode,
    range: open === undefined
      ? config.concurrency
      : open.rate === undefined
      ? config.requestRate
      : { start: open.rate, end: open.rate, step: 1 },
    // A finite schedule is measured whole: --request-count can only shorten it.
    ...(fixed === undefined ? {} : {
      requestCount: config.requestCount > 0
        ? Math.min(config.requestCount, fixed.length)
        : fixed.length,
    }),
  };
  if (options.part !== undefined) {
    const own = await planPart(client, { ...options, part: options.part });
    return { ...plan, level: partLevels(own), close: () => own.close() };
  }
  if (config.workers > 1) {
    // Loaded for --workers only, like the worker threads themselves.
    const { WorkerPool } = await import("./workers/pool.ts");
    const pool = await WorkerPool.open(config, { model, tracer: options.tracer });
    return { ...plan, level: (value) => pool.level(value), close: () => pool.close() };
  }
  const feed = createFeed(client, options);
  if (open === undefined) {
    const load = new ConcurrencyLoad(client, { feed });
    return {
      ...plan,
      level: (value) => ({
        start: (o) => load.start(value, o),
        stop: () => load.stop(),
        drained: () => load.drained(),
      }),
      close: () => load.close(),
    };
  }
  const load = new RateLoad(client, {
    feed,
    maxInflight: config.maxInflight,
    serialSequences: config.sequences.serial,
  });
  const rng = mulberry32(SCHEDULE_SEED);
  return {
    ...plan,
    level: (value) => ({
      prepare: () => load.prepare(),
      start: (o) => load.start(open.schedule(value, rng), o),
      stop: () => load.stop(),
      drained: () => load.drained(),
    }),
    close: () => load.close(),
  };
}

/**
 * The levels of a part driven from this thread (--shard: this rank's). Every
 * part starts at the same moment (the ranks leave a barrier together) and
 * counts its starts alike, so that all walk the same schedule.
 */
function partLevels(load: PartLoad): (value: number) => LevelLoad {
  let serial = 0;
  return (value) => ({
    start: ({ recorder, limit }) =>
      load.start({
        value,
        ...(limit === undefined ? {} : { limit }),
        startMs: performance.now(),
        serial: ++serial,
      }, recorder),
    stop: () => load.stop(),
    drained: () => load.drained(),
  });
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
  options: LoadPlanOptions & { part: Part; alarm?: AlarmOptions },
): Promise<PartLoad> {
  const { config, part } = options;
  const sequences = {
    ...config.sequences,
    count: Math.max(1, share(config.sequences.count, part)),
    idRange: shareRange(config.sequences.idRange, part),
  };
  const feed = createFeed(client, { ...options, config: { ...config, sequences } });
  if (config.loadMode === "concurrency") {
    const load = new ConcurrencyLoad(client, { feed });
    return {
      start: ({ value, limit }, recorder) => {
        // Workers without lanes at this level send nothing, so the others share the limit.
        const active = { index: part.index, count: Math.min(value, part.count) };
        const budget = part.index < active.count ? share(limit ?? 0, active) : 0;
        load.start(share(value, part), {
          recorder,
          ...(limit === undefined ? {} : { limit: budget }),
        });
      },
      stop: () => load.stop(),
      drained: () => load.drained(),
      close: () => load.close(),
    };
  }
  const { schedule } = await openLoop(options);
  const load = new RateLoad(client, {
    feed,
    maxInflight: share(config.maxInflight, part),
    serialSequences: config.sequences.serial,
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
