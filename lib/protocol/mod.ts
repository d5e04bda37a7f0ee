/**
 * How requests reach a server: the client contract (types.ts), our HTTP/1.1
 * client and HTTP/2 + gRPC layers (http1/, grpc/), the KServe v2, TF Serving,
 * TorchServe and OpenAI clients, Triton's core library in process through
 * FFI (triton_c_api/), shared memory, trace settings, TLS files, the client
 * part of a plan (plan.ts) and the service kinds (kinds/: one file each and
 * a registry). The protocol modules load lazily, per kind.
 * May import lib/types and lib/input (the tensor codec).
 *
 * @module
 */
export * from "./errors.ts";
export type * from "./plan.ts";
export * from "./types.ts";
export * from "./kinds/mod.ts";
