/**
 * Reports: perf_analyzer-compatible console blocks and CSV (returned as text),
 * the profile export, the summary JSON and the HTML report.
 */
export * from "./console.ts";
export * from "./csv.ts";
export * from "./format.ts";
export * from "./components.ts";
export * from "./export.ts";
export * from "./html.ts";
export * from "./summary_json.ts";
