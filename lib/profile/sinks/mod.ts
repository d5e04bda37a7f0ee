/**
 * The outputs of a profiling run, in the order they are told of events and
 * write at the end (the export first: after a second Ctrl-C it is all that
 * gets written). Adding one: a file here exporting a SinkDef, and its line
 * below; its formatter belongs in lib/report.
 *
 * @module
 */
import { consoleSink } from "./console.ts";
import { csvSink } from "./csv.ts";
import { exportSink } from "./export.ts";
import { htmlSink } from "./html.ts";
import { llmCsvSink } from "./llm_csv.ts";
import { requestRecordsSink } from "./request_records.ts";
import type { SinkDef } from "./sink.ts";
import type { OutputTarget } from "../../report/output_file.ts";
import type { ProfilePlan } from "../plan.ts";
import { summaryJsonSink } from "./summary_json.ts";

export type { ReportSink, RunEnd, RunTarget, SinkDef } from "./sink.ts";

export const REPORT_SINKS: Map<string, SinkDef> = new Map([
  ["export", exportSink],
  ["request_records", requestRecordsSink],
  ["console", consoleSink],
  ["csv", csvSink],
  ["llm_csv", llmCsvSink],
  ["summary_json", summaryJsonSink],
  ["html", htmlSink],
]);

/** The files `plan` asks for, to check before any load starts. */
export function reportTargets(plan: ProfilePlan): OutputTarget[] {
  return [...REPORT_SINKS.values()].flatMap((sink) => sink.output?.(plan) ?? []);
}
