/**
 * One profiling run end to end: the plan (plan.ts, the stages' parts put
 * together), the run itself (run.ts: discover, build requests, sweep the
 * levels, or search them under SLOs with capacity.ts's judge, checkpoint
 * and CI gates; periodic.ts and sessions.ts: the modes measured as one
 * experiment), its inputs, shared memory and trace settings, the --workers
 * threads (workers/), the report sinks (sinks/: one file each and a
 * registry) that ReportSession drives, and the progress display of long
 * commands (progress.ts).
 * May import every folder below it: lib/types, input, protocol, measure,
 * load and report; never lib/cli, which builds its plan.
 *
 * @module
 */
export * from "./capacity.ts";
export * from "./inputs.ts";
export * from "./model.ts";
export * from "./periodic.ts";
export * from "./progress.ts";
export * from "./sessions.ts";
export type * from "./plan.ts";
export * from "./report_session.ts";
export * from "./run.ts";
export * from "./shared_memory.ts";
export * from "./sinks/mod.ts";
export * from "./trace.ts";
