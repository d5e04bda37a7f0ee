/** --profile-export-file: every request of the run, written as it goes (perf_analyzer's format). */
import denoConfig from "../../../deno.json" with { type: "json" };
import { loadTokenizer } from "../../input/tokenizer.ts";
import type { LoadMode } from "../../types/results.ts";
import type { ProfilePlan } from "../plan.ts";
import type { SinkDef } from "./sink.ts";

/**
 * The experiment a level is exported as: --fixed-schedule and
 * --session-concurrency run one that perf_analyzer files as request rate 0
 * (its profile data collector's mode for both), and genai-perf looks it up
 * under that.
 */
export function exportedExperiment(
  plan: Pick<ProfilePlan, "fixedSchedule" | "sessionConcurrency">,
  level: { mode: LoadMode; value: number },
): { mode: LoadMode; value: number } {
  const single = plan.fixedSchedule || plan.sessionConcurrency !== undefined;
  return single ? { mode: "request_rate", value: 0 } : level;
}

export const exportSink: SinkDef = {
  wanted: (plan) => Boolean(plan.profileExportFile),
  output: (plan) =>
    plan.profileExportFile === undefined
      ? undefined
      : { path: plan.profileExportFile, flag: "--profile-export-file" },
  histograms: true,
  async open(plan, { mode }) {
    const { ProfileExportWriter } = await import("../../report/export.ts");
    // Output texts the server gave no usage for are counted as the console counts them.
    const tokenizer = plan.serviceKind === "openai"
      ? await loadTokenizer(plan.tokenizer)
      : undefined;
    const writer = new ProfileExportWriter(plan.profileExportFile!, tokenizer ? { tokenizer } : {});
    return {
      levelStart: (value) => {
        const experiment = exportedExperiment(plan, { mode, value });
        writer.beginExperiment(experiment.mode, experiment.value);
      },
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
