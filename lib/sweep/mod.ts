/** Sweeps (Model Analyzer style): a matrix of points, checkpoints, best points and reports. */
export * from "./checkpoint.ts";
export * from "./config.ts";
export * from "./goals.ts";
export * from "./runner.ts";
export * from "./summary.ts";
export * from "./html.ts";
