/**
 * --num-profile-runs N: the whole measurement N times, each run reported on
 * the console as a single run is, then every headline figure of every level
 * as the mean of the runs with its confidence interval, in every output
 * (console, CSV, summary JSON, HTML). --convergence-threshold stops earlier,
 * once every interval is narrow enough (after at least three runs).
 */
import { Interrupt } from "../measure/interrupt.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import { reportTargets } from "../profile/sinks/mod.ts";
import {
  formatConfidence,
  hasConverged,
  levelConfidence,
  MIN_ADAPTIVE_RUNS,
  type RunsReport,
} from "../report/confidence.ts";
import type { JsonObject } from "../report/figures.ts";
import { checkOutputs } from "../report/output_file.ts";
import { levelsJson } from "../report/summary_json.ts";
import { withReported } from "../measure/stats.ts";
import type { CommandContext, Outcome } from "./outcome.ts";
import { printError } from "./outcome.ts";
import { type ConsoleRun, consoleRun, openRunsOutputs } from "./_console_runs.ts";

export async function profileRunsCommand(
  config: ProfilePlan,
  context: CommandContext,
): Promise<Outcome> {
  checkOutputs(reportTargets(config));
  const interrupt = new Interrupt();
  const percentiles = withReported(config.percentile === undefined ? [] : [config.percentile]);
  const runs: JsonObject[][] = [];
  let last: Omit<ConsoleRun, "failedRequests"> = { results: [] };
  let report: RunsReport | undefined;
  let failed = 0;
  const outputs = await openRunsOutputs(config, {
    interrupt,
    context,
    end: () => ({ ...last, ...(report && runs.length > 0 ? { runs: report } : {}) }),
  });
  try {
    for (let k = 0; k < config.numProfileRuns && !interrupt.soft; k++) {
      if (k > 0 && config.cooldownMs > 0) {
        await new Promise((resolve) => setTimeout(resolve, config.cooldownMs));
      }
      console.log(`*** Profile run ${k + 1} of ${config.numProfileRuns} ***`);
      const { failedRequests, ...run } = await consoleRun(config, {
        interrupt,
        // The summary's windows read their latencies from histograms.
        histograms: Boolean(config.summaryJson || config.reportHtml),
        step: { noun: "run", index: k + 1, total: config.numProfileRuns, label: config.model },
      });
      failed += failedRequests;
      last = run;
      runs.push(
        levelsJson(run.results, { batchSize: config.batchSize, percentiles }) as JsonObject[],
      );
      const levels = levelConfidence(runs, config.confidenceLevel);
      const threshold = config.convergenceThreshold;
      report = {
        requested: config.numProfileRuns,
        completed: runs.length,
        confidenceLevel: config.confidenceLevel,
        levels,
        ...(threshold === undefined
          ? {}
          : { convergenceThreshold: threshold, converged: hasConverged(levels, threshold) }),
      };
      if (report.converged && runs.length >= MIN_ADAPTIVE_RUNS) break;
    }
  } catch (error) {
    // What the finished runs measured is still written.
    outputs.finishQuietly();
    throw error;
  } finally {
    outputs.close();
  }
  outputs.finish();
  if (report) console.log(formatConfidence(report));
  if (failed > 0) printError(`${failed} requests failed; see "Failed requests" in the reports`);
  if (interrupt.soft) return "interrupted";
  return failed > 0 ? "failed" : "ok";
}
