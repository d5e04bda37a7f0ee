/**
 * Triton's core library in this process (--triton-server-directory,
 * --model-repository): no network, so no URL, headers or TLS; the requests
 * are built from the input data as for triton. --shared-memory system is the
 * client's own input and output regions (no server extension in process).
 */
import type { ServiceKindDef } from "./kind.ts";

export const tritonCApi: ServiceKindDef = {
  async createClient(plan, options) {
    // Loaded for C API runs only: the FFI symbols and the client.
    const { startCApiClient } = await import("../triton_c_api/mod.ts");
    return await startCApiClient({
      directory: plan.tritonServerDirectory,
      repository: plan.modelRepository,
      verbose: plan.verbose > 0,
      ...(plan.sharedMemory === "system"
        ? {
          sharedMemory: {
            batchSize: plan.batchSize,
            outputSharedMemorySize: plan.outputSharedMemorySize,
          },
        }
        : {}),
      ...options,
    });
  },
};
