/** --profile-export-file: every request of the run, written as it goes (perf_analyzer's format). */
import denoConfig from "../../../deno.json" with { type: "json" };
import type { SinkDef } from "./sink.ts";

export const exportSink: SinkDef = {
  wanted: (plan) => Boolean(plan.profileExportFile),
  output: (plan) =>
    plan.profileExportFile === undefined
      ? undefined
      : { path: plan.profileExportFile, flag: "--profile-export-file" },
  histograms: true,
  async open(plan, { mode }) {
    const { ProfileExportWriter } = await import("../../report/export.ts");
    const writer = new ProfileExportWriter(plan.profileExportFile!);
    return {
      levelStart: (value) => writer.beginExperiment(mode, value),
      window: (window) => writer.addWindow(window),
      level: (result) => {
        if (result.openLoop?.behindSchedule) writer.markBehindSchedule();
      },
      requests: writer,
      // First: after a hard interrupt this is all that gets written before the process exits.
      finish: () =>
        writer.finish({
          version: denoConfig.version,
          serviceKind: plan.serviceKind,
          endpoint: plan.endpoint,
        }),
    };
  },
};
