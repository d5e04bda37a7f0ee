/** --profile-export-file: every request of the run, written as it goes (perf_analyzer's format). */
import denoConfig from "../../../deno.json" with { type: "json" };
import { loadTokenizer } from "../../input/tokenizer.ts";
import type { LoadMode } from "../../types/results.ts";
import type { ProfilePlan } from "../plan.ts";
import type { SinkDef } from "./sink.ts";

/**
 * The experiment a level is exported as, as perf_analyzer's profile data
 * collector files it: --fixed-schedule and --session-concurrency as request
 * rate 0 (genai-perf looks them up under that), --periodic-concurrency-range
 * as concurrency 1; sessions and the periodic pattern as one window from 0
 * to the largest 64-bit time (`wholeRun`).
 */
export function exportedExperiment(
  plan: Pick<ProfilePlan, "fixedSchedule" | "sessionConcurrency" | "periodic">,
  level: { mode: LoadMode; value: number },
): { mode: LoadMode; value: number; wholeRun: boolean } {
  if (plan.periodic !== undefined) return { mode: "concurrency", value: 1, wholeRun: true };
  const sessions = plan.sessionConcurrency !== undefined;
  return plan.fixedSchedule || sessions
    ? { mode: "request_rate", value: 0, wholeRun: sessions }
    : { ...level, wholeRun: false };
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
        writer.beginExperiment(experiment.mode, experiment.value, {
          wholeRun: experiment.wholeRun,
        });
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
          endpoint: plan.exportEndpoint,
        }),
    };
  },
};
