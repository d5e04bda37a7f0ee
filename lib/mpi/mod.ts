/**
 * MPI jobs (--enable-mpi): the system's libmpi through Deno FFI (ffi.ts,
 * behind the Communicator of communicator.ts), the ranks' coordinator that
 * lib/measure's level loop calls (coordinator.ts), windows encoded between
 * ranks and merged (--shard), this process as a rank (session.ts: the part
 * of the load it sends, the clocks, per-rank figures, the profile exports
 * gathered on rank 0) and the MPI part of a plan (plan.ts).
 * May import lib/types, lib/input, lib/protocol, lib/measure, lib/load (the
 * split of a load into parts) and lib/report (merging the ranks' exports);
 * lib/profile and lib/commands import it.
 *
 * @module
 */
export * from "./communicator.ts";
export * from "./coordinator.ts";
export * from "./ffi.ts";
export * from "./merge.ts";
export type * from "./plan.ts";
export * from "./session.ts";
export * from "./window_codec.ts";
