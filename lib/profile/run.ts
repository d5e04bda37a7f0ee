/**
 * One profiling run: discover the model, build the requests, sweep the load
 * levels. Returns data; printing and exit codes belong to main.ts.
 */
import type { ProfileConfig } from "../cli/config.ts";
import { ConcurrencyLoad } from "../load/concurrency.ts";
import { sweep, type SweepOutcome } from "../load/sweep.ts";
import { type LevelLoad, measureLevel } from "../measure/level.ts";
import type { ClientSummary, LevelResult, WindowData } from "../measure/types.ts";
import { KServeHttpClient } from "../protocol/kserve_http.ts";
import {
  hasStatistics,
  type InferenceClient,
  type ModelInfo,
  type ModelStatistics,
  type ServerInfo,
} from "../protocol/types.ts";
import { buildRequests } from "./inputs.ts";
import type { Interrupt } from "./interrupt.ts";

export interface RunEvents {
  /** The model is known and requests are built; load starts next. */
  ready?(info: { server: ServerInfo; model: ModelInfo }): void;
  /** A window of `level` ended (verbose output). */
  window?(window: WindowData, info: { level: number; index: number }): void;
  /** A load level is measured. */
  level?(result: LevelResult): void;
  /** A load level starts (progress display). */
  levelStart?(value: number): void;
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

export function createClient(config: ProfileConfig): InferenceClient {
  return new KServeHttpClient({
    url: config.url,
    headers: config.headers,
    inputFormat: config.inputTensorFormat,
    outputFormat: config.outputTensorFormat,
    ...(config.requestTimeoutMs > 0 ? { requestTimeoutMs: config.requestTimeoutMs } : {}),
  });
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
  const client = options.client ?? createClient(config);
  try {
    const server = await client.serverInfo();
    const model = await client.modelInfo(config.model, config.modelVersion);
    const requests = buildRequests(model, config).map((r) =>
      client.prepare(r, { model: config.model, version: config.modelVersion })
    );
    events.ready?.({ server, model });
    const statistics = statisticsSource(client, { server, model, config });
    const load = new ConcurrencyLoad(client, { requests });
    try {
      const outcome = await sweep(async (value) => {
        events.levelStart?.(value);
        const levelLoad: LevelLoad = {
          start: (o) => load.start(value, o),
          stop: () => load.stop(),
          drained: () => load.drained(),
        };
        const result = await measureLevel(levelLoad, {
          ...config,
          mode: "concurrency",
          value,
          model: config.model,
          interrupt,
          ...(statistics ? { statistics } : {}),
          onWindow: (w, index) => events.window?.(w, { level: value, index }),
        });
        if (result.stable || interrupt.soft) events.level?.(result);
        return result;
      }, {
        range: config.concurrency,
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
    await client.close();
  }
}
