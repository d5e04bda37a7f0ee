/** What a report sink is: the interface every entry of the registry (mod.ts) implements. */
import type { TraceSettings } from "../../protocol/types.ts";
import type { RequestTracer } from "../../report/export.ts";
import type { OutputTarget } from "../../report/output_file.ts";
import type { ModelInfo, ServerInfo } from "../../types/model.ts";
import type { CapacityReport, LevelResult, LoadMode, WindowData } from "../../types/results.ts";
import type { RunsReport } from "../../report/confidence.ts";
import type { ProfilePlan } from "../plan.ts";
import type { RequestSink } from "../../types/timing.ts";
import type { ProgressStep } from "../progress.ts";

/** The server and model of a run, once discovered. */
export interface RunTarget {
  server: ServerInfo;
  model: ModelInfo;
}

/** How a run ended, as each sink is told once. */
export interface RunEnd {
  /** The reported levels, in order. */
  results: readonly LevelResult[];
  /** Why the run stopped early, when it did. */
  note?: string;
  /** Absent when the run failed before the model was known. */
  target?: RunTarget;
  /** --num-profile-runs: the runs' confidence (`results` are then the last run's levels). */
  runs?: RunsReport;
  /** --search-recipe: the capacity search's answer. */
  capacity?: CapacityReport;
}

/**
 * One output of a run, told of its events as they happen (between windows
 * and levels, never inside the request loop). finish() is synchronous so
 * that a second Ctrl-C can still write what exists.
 */
export interface ReportSink {
  traceSettings?(settings: TraceSettings): void;
  ready?(target: RunTarget): void;
  levelStart?(value: number): void;
  /** The level's requests completed so far in its current window (a progress display reads it). */
  live?(completed: () => number): void;
  window?(window: WindowData, info: { level: number; index: number }): void;
  level?(result: LevelResult): void;
  warning?(message: string): void;
  /** Sees every request of the run (the profile export). */
  requests?: RequestTracer;
  /** Sees every completed request (no client wrapped): the per-request records. */
  records?: RequestSink;
  finish?(end: RunEnd): void;
}

export interface SinkDef {
  /** The plan asks for this output. */
  wanted(plan: ProfilePlan): boolean;
  /** The file the output goes to, checked writable before any load starts. */
  output?(plan: ProfilePlan): OutputTarget | undefined;
  /** The output carries the windows' latency histograms. */
  histograms: boolean;
  /**
   * Opens the sink; a report module loads here, for the runs that use it
   * only. `step`: the run is one of several (the console's progress says which).
   */
  open(plan: ProfilePlan, options: { mode: LoadMode; step?: ProgressStep }): Promise<ReportSink>;
}

/** The model as reports name it: as the server described it, else as -m and -x gave it. */
export function reportedModel(
  plan: Pick<ProfilePlan, "model" | "modelVersion">,
  target: RunTarget | undefined,
): { name: string; version: string } {
  return {
    name: target?.model.name ?? plan.model,
    version: target?.model.version ?? plan.modelVersion,
  };
}
