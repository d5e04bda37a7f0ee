/**
 * Session concurrency mode (--session-concurrency): one experiment instead
 * of a sweep, as in perf_analyzer: every session of the input data runs
 * once, and the result covers all their requests as one window.
 */
import { sessionsOf } from "../input/sessions.ts";
import type { DataSet } from "../input/data_set.ts";
import { SessionLoad } from "../load/sessions.ts";
import type { Interrupt } from "../measure/interrupt.ts";
import { Recorder } from "../measure/recorder.ts";
import { summarizeClient } from "../measure/stats.ts";
import { groupSummaries, summarizeTokens, type TokenSummaryOptions } from "../measure/tokens.ts";
import type { InferenceClient } from "../protocol/types.ts";
import type { Histogram, LevelResult } from "../types/results.ts";
import type { RequestSink } from "../types/timing.ts";

export interface SessionRunOptions {
  sessionConcurrency: number;
  model: string;
  modelVersion: string;
  /** Reported beside perf_analyzer's percentiles. */
  percentile?: number;
  dataSet: DataSet;
  interrupt: Interrupt;
  /** Receives every completed request (the profile export). */
  sink?: RequestSink;
  /** Makes the window's latency histogram (for exports). */
  newHistogram?: () => Histogram;
  /** The LLM summary's tokenizer and goodput objectives. */
  tokens?: Omit<TokenSummaryOptions, "percentiles">;
}

/**
 * Runs every session once, or until an interrupt (no turn starts after the
 * first, the second stops waiting), recording them as one window. Throws an InputError before sending when the
 * data does not make sessions.
 */
export async function runSessions(
  client: InferenceClient,
  options: SessionRunOptions,
): Promise<LevelResult> {
  const concurrency = options.sessionConcurrency;
  const load = new SessionLoad(client, {
    sessions: sessionsOf(options.dataSet, concurrency),
    concurrency,
    target: { model: options.model, version: options.modelVersion },
    stopped: () => options.interrupt.soft,
  });
  const recorder = new Recorder({ sink: options.sink, newHistogram: options.newHistogram });
  recorder.rotate();
  await options.interrupt.race(load.run(recorder));
  const window = recorder.rotate();
  const percentiles = options.percentile === undefined ? [] : [options.percentile];
  const tokenOptions = { ...options.tokens, percentiles };
  const llm = summarizeTokens([window], tokenOptions);
  if (llm !== undefined) {
    const byTurn = groupSummaries(
      window,
      load.labels.map((l) => String(l.turnIndex)),
      tokenOptions,
    );
    llm.turns = [...byTurn].map(([turn, summary]) => ({ turnIndex: Number(turn), llm: summary }))
      .sort((a, b) => a.turnIndex - b.turnIndex);
    const bySession = groupSummaries(window, load.labels.map((l) => l.sessionId), tokenOptions);
    llm.sessions = [...bySession].map(([sessionId, summary]) => ({ sessionId, llm: summary }));
  }
  return {
    mode: "concurrency",
    value: concurrency,
    client: summarizeClient([window], { batchSize: 1, percentiles }),
    stable: true,
    windows: [window],
    ...(llm ? { llm } : {}),
  };
}
