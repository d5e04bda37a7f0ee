/**
 * --shared-memory system: the shared-memory regions of Triton runs,
 * registered before the load and released after it.
 */
import type { ProfilePlan } from "./plan.ts";
import { UsageError } from "../types/errors.ts";
import { hasSharedMemoryControl, outputSlotBytes, SystemSharedMemory } from "../protocol/shm.ts";
import type { InferenceClient } from "../protocol/types.ts";
import type { InferRequest } from "../types/tensor.ts";
import type { ModelInfo, ServerInfo } from "../types/model.ts";

/** The shared memory of a run: requests placed in it, released at the end. */
export interface SharedMemorySession {
  /** The request naming its tensors' regions (requests built from the run's data only). */
  place(request: InferRequest): InferRequest;
  /** Unregisters the regions and removes the shared-memory objects. */
  release(): Promise<void>;
}

/**
 * --shared-memory system: writes the inputs of `requests` into shared memory
 * and registers the regions; undefined without the option.
 */
export async function openSharedMemory(
  client: InferenceClient,
  options: {
    config: Pick<
      ProfilePlan,
      "sharedMemory" | "url" | "outputSharedMemorySize" | "batchSize" | "serviceKind"
    >;
    server: ServerInfo;
    model: ModelInfo;
    requests: readonly InferRequest[];
  },
): Promise<SharedMemorySession | undefined> {
  const { config, server } = options;
  // In process, the C API client keeps its own input regions (lib/protocol/triton_c_api).
  if (config.sharedMemory !== "system" || config.serviceKind === "triton_c_api") return undefined;
  if (!hasSharedMemoryControl(client) || !server.extensions.includes("system_shared_memory")) {
    throw new UsageError([
      `--shared-memory system needs a server with Triton's system shared-memory extension; ` +
      `"${server.name || config.url}" does not list "system_shared_memory"`,
    ]);
  }
  let memory: SystemSharedMemory;
  try {
    memory = new SystemSharedMemory(options.requests, {
      outputByteSize: outputSlotBytes(options.model, {
        batchSize: config.batchSize,
        variableBytes: config.outputSharedMemorySize,
      }),
    });
  } catch (error) {
    throw new UsageError([(error as Error).message]);
  }
  try {
    await memory.register(client);
  } catch (error) {
    await memory.release(client);
    throw error;
  }
  return { place: (request) => memory.place(request), release: () => memory.release(client) };
}
