/**
 * Sweeps (Model Analyzer style, --profile-models): a matrix of points, each
 * a command line that lib/cli turns into a plan and lib/profile runs;
 * checkpoints, goals, best points, the summary and the sweep's HTML report.
 * May import every folder below it, lib/cli included.
 *
 * @module
 */
export * from "./checkpoint.ts";
export * from "./config.ts";
export * from "./goals.ts";
export * from "./html.ts";
export * from "./runner.ts";
export * from "./summary.ts";
/** The sweep report's chart script, which the search's summary page draws with too. */
export { SWEEP_SCRIPT } from "./_html_script.ts";
