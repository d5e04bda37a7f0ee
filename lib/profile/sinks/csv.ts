/** -f: perf_analyzer's CSV of the levels (--verbose-csv adds columns, --collect-metrics GPU ones). */
import { formatCsv } from "../../report/csv.ts";
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
  histograms: false,
  open: (plan, { mode }) =>
    Promise.resolve({
      finish: ({ results, target }) => {
        if (results.length === 0) return;
        Deno.writeTextFileSync(
          plan.latencyReportFile!,
          formatCsv(results, {
            mode,
            verbose: plan.verboseCsv,
            percentile: plan.percentile,
            decoupled: target?.model.decoupled ?? false,
            ...(plan.collectMetrics ? { metrics: metricsByLevel(results) } : {}),
          }),
        );
      },
    }),
};
