/**
 * Reports as text and files: perf_analyzer-compatible console blocks and
 * CSV, the profile export, the summary JSON and the HTML report (and the page
 * template the sweep's HTML shares), side-by-side runs' summaries and exports
 * merged (merge.ts, `inferperf merge`), and the report part of a plan. The
 * functions format; lib/profile/sinks decides when and where they write.
 * May import lib/types, lib/input, lib/protocol and lib/measure; never
 * lib/load or lib/server, its siblings.
 *
 * @module
 */
export * from "./capacity.ts";
export * from "./console.ts";
export * from "./csv.ts";
export * from "./format.ts";
export * from "./components.ts";
export * from "./export.ts";
export * from "./html.ts";
export * from "./html_template.ts";
export * from "./merge.ts";
export type * from "./plan.ts";
export * from "./result_json.ts";
export * from "./summary_json.ts";
