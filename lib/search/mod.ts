/**
 * Model configuration search (Model Analyzer's `profile`: --profile-models
 * with --model-repository): config.pbtxt variants of each model, the Triton
 * server they are loaded into (local, remote, c_api), each variant's
 * concurrency sweep through the sweep's points and checkpoints, weighted
 * objectives and constraints, Model Analyzer's CSV reports and the best
 * configuration as a ready model directory. The engine search (`engine`
 * in --config) runs the same search over an LLM engine's settings: each
 * variant a server process started from a command template (engine_*.ts).
 * May import every folder below it, lib/sweep and lib/cli included.
 *
 * @module
 */
export * from "./config.ts";
export * from "./kind.ts";
export * from "./fields.ts";
export * from "./objectives.ts";
export * from "./report.ts";
export * from "./run.ts";
export * from "./server.ts";
export * from "./variants.ts";
export * from "./walks.ts";
export * from "./concurrent.ts";
export * from "./concurrent_report.ts";
export * from "./optuna.ts";
export * from "./neighborhood.ts";
export * from "./ensemble_quick.ts";
export * from "./bls.ts";
export * from "./tpe.ts";
export * from "./html.ts";
export * from "./detailed.ts";
export * from "./engine_config.ts";
export * from "./engine_html.ts";
export * from "./engine_presets.ts";
export * from "./engine_report.ts";
export * from "./engine_server.ts";
export * from "./engine_variants.ts";
