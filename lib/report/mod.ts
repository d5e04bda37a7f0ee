/** perf_analyzer-compatible reports: console blocks and CSV, returned as text. */
export * from "./console.ts";
export * from "./csv.ts";
export * from "./format.ts";
