/** -f: perf_analyzer's CSV of the levels (--verbose-csv adds columns, --collect-metrics GPU ones). */
import { writeFileAtomic } from "../../report/output_file.ts";
import { formatCsv } from "../../report/csv.ts";
import { capacityCsv } from "../../report/capacity.ts";
import type { LevelResult } from "../../types/results.ts";
import type { SinkDef } from "./sink.ts";

/** --collect-metrics per level. */
function metricsByLevel(
  results: readonly LevelResult[],
): Map<number, NonNullable<LevelResult["metrics"]>> {
  return new Map(results.flatMap((r) => r.metrics ? [[r.value, r.metrics] as const] : []));
}

export const csvSink: SinkDef = {
  wanted: (plan) => Boolean(plan.latencyReportFile),
  output: (plan) =>
    plan.latencyReportFile === undefined
      ? undefined
      : { path: plan.latencyReportFile, flag: "-f/--latency-report-file" },
  histograms: false,
  open: async (plan, { mode }) => {
    // The repeat runs' table and its statistics load with the CSV, not at every start.
    const { formatConfidenceCsv } = await import("../../report/confidence.ts");
    return {
      finish: ({ results, target, runs, capacity }) => {
        if (runs) return writeFileAtomic(plan.latencyReportFile!, formatConfidenceCsv(runs));
        if (results.length === 0) return;
        writeFileAtomic(
          plan.latencyReportFile!,
          formatCsv(results, {
            mode,
            verbose: plan.verboseCsv,
            percentile: plan.percentile,
            decoupled: target?.model.decoupled ?? false,
            cache: target?.model.responseCache ?? false,
            serverStats: (plan.serviceKind === "triton" || plan.serviceKind === "triton_c_api") &&
              (target?.server.extensions.includes("statistics") ?? false),
            ...(plan.collectMetrics ? { metrics: metricsByLevel(results) } : {}),
          }) + (capacity ? capacityCsv(capacity) : ""),
        );
      },
    };
  },
};
