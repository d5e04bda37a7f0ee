/**
 * The commands' console flow (profile, demo, serve, sweep, report, merge): each
 * takes its plan or options and returns an outcome; main.ts turns outcomes
 * and errors into exit codes.
 * May import every folder of lib/.
 *
 * @module
 */
export * from "./outcome.ts";
export * from "./compare.ts";
export * from "./merge.ts";
export * from "./profile.ts";
export * from "./serve.ts";
export * from "./sweep.ts";
