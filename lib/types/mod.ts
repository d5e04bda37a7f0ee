/**
 * The ground floor: the plain data every stage shares (tensors and their
 * specs, model metadata and statistics, request timing, window and level
 * results, the histogram interface) and the usage error.
 * May import nothing outside this folder; every other folder may import it.
 *
 * @module
 */
export * from "./datatype.ts";
export * from "./errors.ts";
export type * from "./model.ts";
export type * from "./results.ts";
export type * from "./tensor.ts";
export * from "./timing.ts";
