/**
 * --sweep-size N: GuideLLM's sweep profile. A synchronous level (one request
 * at a time) and a throughput level (--sweep-max-concurrency in flight) find
 * the request rates the server takes alone and at most; N - 2 open-loop
 * rates evenly between them (the last is the throughput rate) follow,
 * constant or Poisson, until one is over-saturated (lib/measure/saturation.ts).
 * Every level goes to every output, as a sweep's levels do, each named by
 * its strategy ("synchronous", "throughput@64", "constant@45.2").
 */
import { Interrupt } from "../measure/interrupt.ts";
import { overSaturation } from "../measure/saturation.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import { reportTargets, type RunTarget } from "../profile/sinks/mod.ts";
import { formatSummaryTable } from "../report/console.ts";
import { formatGeneral } from "../report/format.ts";
import { checkOutputs } from "../report/output_file.ts";
import type { LevelResult } from "../types/results.ts";
import { consoleRun, openRunsOutputs } from "./_console_runs.ts";
import { type CommandContext, type Outcome, printError } from "./outcome.ts";

/** The confidence of the over-saturation trends. */
const TREND_LEVEL = 0.95;

/** `count` rates evenly from `low` to `high` past `low` (GuideLLM's linspace without its first). */
export function sweepRates(low: number, high: number, count: number): number[] {
  if (count <= 0 || !(high > 0)) return [];
  const step = (high - low) / count;
  // Hundredths of a request per second: exact enough, and readable in every report.
  return Array.from({ length: count }, (_, i) => Math.round((low + step * (i + 1)) * 100) / 100)
    .filter((rate) => rate > 0);
}

/** Requests per second of a level (throughput counts inferences: batch size x requests). */
const requestRate = (r: LevelResult, batchSize: number) => r.client.throughput / batchSize;

export async function autoSweepCommand(
  config: ProfilePlan,
  context: CommandContext,
): Promise<Outcome> {
  const size = config.sweepSize!;
  checkOutputs(reportTargets(config));
  const interrupt = new Interrupt();
  const results: LevelResult[] = [];
  let target: RunTarget | undefined;
  let note: string | undefined;
  let failed = 0;
  // The outputs name levels by strategy; their plan's mode is the rates'.
  const outputs = await openRunsOutputs({ ...config, loadMode: "request_rate" }, {
    interrupt,
    context,
    end: () => ({ results, ...(note ? { note } : {}), ...(target ? { target } : {}) }),
  });
  /** Measures one level of the sweep, its strategy named; undefined when it measured nothing. */
  const level = async (plan: ProfilePlan, strategy: string) => {
    console.log(`*** Sweep ${results.length + 1} of ${size}: ${strategy} ***`);
    const run = await consoleRun(plan, {
      interrupt,
      histograms: true,
      keepUnstable: true,
      step: { noun: "level", index: results.length + 1, total: size, label: strategy },
    });
    failed += run.failedRequests;
    target ??= run.target;
    const result = run.results[0];
    if (result === undefined) return undefined;
    result.strategy = strategy;
    if (plan.loadMode === "request_rate") {
      const trend = overSaturation(result.windows, { level: TREND_LEVEL });
      if (trend) result.overSaturation = trend;
    }
    results.push(result);
    return result;
  };
  const closed = (c: number): ProfilePlan => ({
    ...config,
    loadMode: "concurrency",
    concurrency: { start: c, end: c, step: 1 },
  });
  try {
    const synchronous = await level(closed(1), "synchronous");
    const c = config.sweepMaxConcurrency;
    const throughput = synchronous && !interrupt.soft
      ? await level(closed(c), `throughput@${c}`)
      : undefined;
    if (synchronous && throughput) {
      const rates = sweepRates(
        requestRate(synchronous, config.batchSize),
        requestRate(throughput, config.batchSize),
        size - 2,
      );
      for (const rate of rates) {
        if (interrupt.soft) break;
        const r = await level(
          { ...config, loadMode: "request_rate", requestRate: { start: rate, end: rate, step: 1 } },
          `${config.requestDistribution}@${formatGeneral(rate)}`,
        );
        if (r?.overSaturation) {
          const t = r.overSaturation;
          note = `Over-saturated at request rate ${formatGeneral(rate)}: over its ${t.windows} ` +
            `windows the requests in flight grew by ${t.inflightPerS.toFixed(1)}/s and the ` +
            `latency by ${t.latencyMsPerS.toFixed(1)} ms/s; the sweep stops there.`;
          break;
        }
      }
    }
  } catch (error) {
    outputs.finishQuietly();
    throw error;
  } finally {
    outputs.close();
  }
  if (interrupt.soft) note ??= "Interrupted: reporting the levels measured so far.";
  outputs.finish();
  console.log(`*** Sweep: ${results.length} levels ***`);
  if (note) console.log(note);
  console.log(formatSweep(results, config.batchSize));
  if (failed > 0) printError(`${failed} requests failed; see "Failed requests" in the reports`);
  if (interrupt.soft) return "interrupted";
  return failed > 0 ? "failed" : "ok";
}

/** The sweep's summary: each level's strategy, request rate achieved and latency. */
function formatSweep(results: readonly LevelResult[], batchSize: number): string {
  const rows = results.map((r) =>
    `${(r.strategy ?? "").padEnd(22)} ${formatGeneral(requestRate(r, batchSize)).padStart(10)} ` +
    `req/sec, avg latency ${(r.client.avgLatencyUs / 1000).toFixed(2)} ms, p99 ${
      ((r.client.percentilesUs.get(99) ?? 0) / 1000).toFixed(2)
    } ms${r.stable ? "" : " (unstable)"}${r.overSaturation ? " (over-saturated)" : ""}`
  );
  return `${rows.join("\n")}\n\n${formatSummaryTable(results).trimEnd()}`;
}
