/**
 * Load generation: the load modes (modes/: a pure pacer or a concurrency
 * controller each, and a registry), the levels' loads of a run (levels.ts,
 * run alike on the main thread and in --workers threads), the closed and
 * open loops, schedules and load shapes (ramps, stages: shape.ts), the pacer
 * and its alarm, sequences, chat sessions, the sweep over levels, ranges and
 * the load part of a plan (plan.ts).
 * May import lib/types, lib/input, lib/protocol and lib/measure; never
 * lib/report or lib/server, its siblings.
 *
 * @module
 */
export * from "./alarm.ts";
export * from "./capacity.ts";
export * from "./concurrency.ts";
export * from "./feed.ts";
export * from "./levels.ts";
export * from "./modes/mod.ts";
export * from "./pacer.ts";
export * from "./periodic.ts";
export type * from "./plan.ts";
export * from "./range.ts";
export * from "./rate.ts";
export * from "./schedule.ts";
export * from "./sequences.ts";
export * from "./sessions.ts";
export * from "./shape.ts";
export * from "./split.ts";
export * from "./sweep.ts";
