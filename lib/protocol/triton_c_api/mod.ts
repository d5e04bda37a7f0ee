/**
 * Triton's core library in this process (--service-kind triton_c_api),
 * through Deno FFI: the symbols (ffi.ts), the in-process server (server.ts),
 * the response allocator (allocator.ts) and the client (client.ts, with the
 * request preparation of _request.ts). lib/protocol/kinds/triton_c_api.ts
 * loads this module lazily, for the runs of that kind only.
 *
 * @module
 */
import { UsageError } from "../../types/errors.ts";
import { TritonCApiClient, type TritonCApiOptions } from "./client.ts";
import { CApiSetupError } from "./server.ts";

export { TritonCApiClient, type TritonCApiOptions } from "./client.ts";

/**
 * Starts the in-process server of a run and says so as perf_analyzer does
 * ("server is alive!"); setup problems are usage errors (one line).
 */
export async function startCApiClient(options: TritonCApiOptions): Promise<TritonCApiClient> {
  try {
    const client = await TritonCApiClient.start(options);
    console.log("server is alive!");
    return client;
  } catch (error) {
    if (error instanceof CApiSetupError) throw new UsageError([error.message]);
    throw error;
  }
}
