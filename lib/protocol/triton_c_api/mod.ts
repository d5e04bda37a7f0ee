/**
 * Triton's core library in this process (--service-kind triton_c_api),
 * through Deno FFI: the symbols (ffi.ts), the in-process server (server.ts),
 * the response allocator (allocator.ts), the regions of --shared-memory system
 * (_regions.ts) and the client (client.ts, with the request preparation of
 * _request.ts). lib/protocol/kinds/triton_c_api.ts loads this module lazily,
 * for the runs of that kind only.
 *
 * @module
 */
import { TritonCApiClient, type TritonCApiOptions } from "./client.ts";

export { TritonCApiClient, type TritonCApiOptions } from "./client.ts";

/**
 * Starts the in-process server of a run and says so as perf_analyzer does
 * ("server is alive!"). Setup errors are typed for main.ts's exit codes
 * (see server.ts).
 */
export async function startCApiClient(options: TritonCApiOptions): Promise<TritonCApiClient> {
  const client = await TritonCApiClient.start(options);
  console.log("server is alive!");
  return client;
}
