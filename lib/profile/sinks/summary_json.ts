/** --summary-json: the levels' figures and latency histograms, for scripts (docs/summary.schema.json). */
import denoConfig from "../../../deno.json" with { type: "json" };
import { writeFileAtomic } from "../../report/output_file.ts";
import { withReported } from "../../measure/stats.ts";
import { reportedModel, type SinkDef } from "./sink.ts";

export const summaryJsonSink: SinkDef = {
  wanted: (plan) => Boolean(plan.summaryJson),
  output: (plan) =>
    plan.summaryJson === undefined ? undefined : { path: plan.summaryJson, flag: "--summary-json" },
  histograms: true,
  async open(plan, { mode }) {
    const { formatSummaryJson } = await import("../../report/summary_json.ts");
    return {
      finish: ({ results, note, target, runs, capacity }) => {
        if (results.length === 0) return;
        const server = target?.server;
        writeFileAtomic(
          plan.summaryJson!,
          formatSummaryJson(results, {
            version: denoConfig.version,
            model: reportedModel(plan, target),
            ...(server ? { server: { name: server.name, version: server.version } } : {}),
            settings: { ...plan, mode },
            ...(note ? { note } : {}),
            ...(capacity ? { capacity } : {}),
            slos: { slos: plan.slos, attainment: plan.sloAttainment },
            percentiles: withReported(plan.percentile === undefined ? [] : [plan.percentile]),
            ...(runs ? { runs } : {}),
          }),
        );
      },
    };
  },
};
