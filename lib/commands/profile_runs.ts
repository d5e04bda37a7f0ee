/**
 * --num-profile-runs N: the whole measurement N times, each run reported on
 * the console as a single run is, then every headline figure of every level
 * as the mean of the runs with its confidence interval, in every output
 * (console, CSV, summary JSON, HTML). --convergence-threshold stops earlier,
 * once every interval is narrow enough (after at least three runs).
 */
import { Interrupt } from "../measure/interrupt.ts";
import type { ProfilePlan } from "../profile/plan.ts";
import { ReportSession } from "../profile/report_session.ts";
import { runProfile } from "../profile/run.ts";
import type { RunTarget } from "../profile/sinks/mod.ts";
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
import type { LevelResult } from "../types/results.ts";
import type { CommandContext, Outcome } from "./outcome.ts";
import { printError } from "./outcome.ts";

/** A run's plan: the console only; the files are written once, from all runs. */
function runPlan(config: ProfilePlan): ProfilePlan {
  return {
    ...config,
    latencyReportFile: undefined,
    llmCsv: undefined,
    summaryJson: undefined,
    reportHtml: undefined,
  };
}

export async function profileRunsCommand(
  config: ProfilePlan,
  context: CommandContext,
): Promise<Outcome> {
  checkOutputs(reportTargets(config));
  const interrupt = new Interrupt();
  // The files of all runs; it hears of no level, only of the end.
  const outputs = await ReportSession.open(config, { console: false });
  const percentiles = withReported(config.percentile === undefined ? [] : [config.percentile]);
  const runs: JsonObject[][] = [];
  let last: { results: readonly LevelResult[]; target?: RunTarget; note?: string } = {
    results: [],
  };
  let report: RunsReport | undefined;
  let failed = 0;
  const finish = () =>
    outputs.finishWith({ ...last, ...(report && runs.length > 0 ? { runs: report } : {}) });
  /** Writes what was measured when the runs end anyway; a failed write is printed, not thrown. */
  const finishAfterFailure = () => {
    try {
      finish();
    } catch (error) {
      printError((error as Error).message);
    }
  };
  const onSignal = () => {
    interrupt.trigger();
    if (interrupt.hard) {
      finishAfterFailure();
      context.exitNow("interrupted");
    }
  };
  Deno.addSignalListener("SIGINT", onSignal);
  try {
    await repeat();
  } catch (error) {
    // What the finished runs measured is still written.
    finishAfterFailure();
    throw error;
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
  }
  finish();
  if (report) console.log(formatConfidence(report));
  if (failed > 0) printError(`${failed} requests failed; see "Failed requests" in the reports`);
  if (interrupt.soft) return "interrupted";
  return failed > 0 ? "failed" : "ok";

  async function repeat(): Promise<void> {
    for (let k = 0; k < config.numProfileRuns && !interrupt.soft; k++) {
      if (k > 0 && config.cooldownMs > 0) {
        await new Promise((resolve) => setTimeout(resolve, config.cooldownMs));
      }
      console.log(`*** Profile run ${k + 1} of ${config.numProfileRuns} ***`);
      const session = await ReportSession.open(runPlan(config), {
        histograms: outputs.histograms,
        step: { noun: "run", index: k + 1, total: config.numProfileRuns, label: config.model },
      });
      const outcome = await runProfile(runPlan(config), { interrupt, events: session.events });
      session.finish(outcome.note);
      failed += session.failedRequests;
      const target = session.target;
      last = {
        results: session.results,
        ...(target ? { target } : {}),
        ...(outcome.note ? { note: outcome.note } : {}),
      };
      runs.push(
        levelsJson(session.results, { batchSize: config.batchSize, percentiles }) as JsonObject[],
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
  }
}
