/** --report-html: one self-contained page of charts and tables. */
import denoConfig from "../../../deno.json" with { type: "json" };
import { writeFileAtomic } from "../../report/output_file.ts";
import { reportedModel, type SinkDef } from "./sink.ts";

export const htmlSink: SinkDef = {
  wanted: (plan) => Boolean(plan.reportHtml),
  output: (plan) =>
    plan.reportHtml === undefined ? undefined : { path: plan.reportHtml, flag: "--report-html" },
  histograms: true,
  async open(plan, { mode }) {
    const { renderHtmlReport } = await import("../../report/html.ts");
    const { capacityHtml } = await import("../../report/capacity.ts");
    return {
      finish: ({ results, note, target, runs, capacity }) => {
        if (results.length === 0) return;
        writeFileAtomic(
          plan.reportHtml!,
          renderHtmlReport(results, {
            version: denoConfig.version,
            model: reportedModel(plan, target),
            mode,
            batchSize: plan.batchSize,
            ...(plan.percentile === undefined ? {} : { percentile: plan.percentile }),
            ...(note ? { note } : {}),
            ...(runs ? { runs } : {}),
            ...(capacity
              ? {
                capacity: capacityHtml(capacity, {
                  results,
                  slos: plan.slos,
                  attainment: plan.sloAttainment,
                }),
              }
              : {}),
          }),
        );
      },
    };
  },
};
