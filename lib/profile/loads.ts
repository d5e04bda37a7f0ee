/**
 * Chooses the load of a run from the configuration: a closed loop
 * (concurrency) or an open loop (request rate, custom intervals), fed with
 * plain requests or, for sequence models, with sequences. The sweep only
 * sees `level(value)`.
 */
import type { ProfileConfig } from "../cli/config.ts";
import type { Range } from "../cli/range.ts";
import { mulberry32 } from "../input/generate.ts";
import { ConcurrencyLoad } from "../load/concurrency.ts";
import { type RequestFeed, RoundRobinFeed } from "../load/feed.ts";
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
import type { LevelLoad } from "../measure/level.ts";
import type { LevelResult, LoadMode } from "../measure/types.ts";
import type { OutputCheck } from "../input/validation.ts";
import type { InferenceClient, ModelInfo, PreparedRequest } from "../protocol/types.ts";
import { InputError, type PlannedRequest } from "./inputs.ts";

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

export interface LoadPlanOptions {
  config: ProfileConfig;
  model: ModelInfo;
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

function createFeed(client: InferenceClient, options: LoadPlanOptions): RequestFeed {
  const { config, model, streams } = options;
  const target = { model: config.model, version: config.modelVersion };
  if (!model.sequence) return new RoundRobinFeed(options.prepared, options.checks);
  const { start, end } = config.sequences.idRange;
  const live = config.loadMode === "concurrency"
    ? Math.max(config.concurrency.start, config.concurrency.end)
    : config.sequences.count;
  if (end - start + 1 < live) {
    throw new InputError(
      `--sequence-id-range ${start}:${end} has ${end - start + 1} ids, but ${live} sequences ` +
        "run at once",
    );
  }
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

export async function planLoad(
  client: InferenceClient,
  options: LoadPlanOptions,
): Promise<LoadPlan> {
  const { config } = options;
  const mode = config.loadMode;
  const intervals = config.requestIntervals === undefined
    ? undefined
    : await readIntervals(config.requestIntervals);
  const feed = createFeed(client, options);
  if (mode === "concurrency") {
    const load = new ConcurrencyLoad(client, { feed });
    return {
      mode,
      range: config.concurrency,
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
  const fixed = options.timestampsMs;
  const schedule = (value: number): Schedule =>
    fixed !== undefined
      ? fixedSchedule(fixed)
      : intervals !== undefined
      ? intervalSchedule(intervals)
      : config.requestDistribution === "poisson"
      ? poissonSchedule(value, rng)
      : constantSchedule(value);
  const rate = fixed !== undefined
    ? fixedScheduleRate(fixed)
    : intervals === undefined
    ? undefined
    : intervalsRate(intervals);
  return {
    mode,
    range: rate === undefined ? config.requestRate : { start: rate, end: rate, step: 1 },
    level: (value) => ({
      start: (o) => load.start(schedule(value), o),
      stop: () => load.stop(),
      drained: () => load.drained(),
    }),
    // A finite schedule is measured whole: --request-count can only shorten it.
    ...(fixed === undefined ? {} : {
      requestCount: config.requestCount > 0
        ? Math.min(config.requestCount, fixed.length)
        : fixed.length,
    }),
    close: () => load.close(),
  };
}
