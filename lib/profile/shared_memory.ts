/**
 * --shared-memory system: the shared-memory regions of Triton runs,
 * registered before the load and released after it.
 */
import type { ProfilePlan } from "./plan.ts";
import { UsageError } from "../types/errors.ts";
import { hasSharedMemoryControl, SystemSharedMemory } from "../protocol/shm.ts";
import type { InferenceClient } from "../protocol/types.ts";
import { elementCount, elementSize } from "../types/datatype.ts";
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
 * The bytes of each output's slot, as perf_analyzer sizes them: a fixed-size
 * output's batch-1 size from the model times the batch size; outputs of
 * variable size (a -1 dim, BYTES) take --output-shared-memory-size per batch
 * element instead.
 */
export function outputSlotBytes(
  model: Pick<ModelInfo, "outputs" | "maxBatchSize">,
  options: { batchSize: number; variableBytes: number },
): (output: string) => number {
  const batch = model.maxBatchSize > 0 ? options.batchSize : 1;
  const sizes = new Map(model.outputs.map((spec) => {
    const fixed = elementSize(spec.datatype) > 0 && !spec.dims.includes(-1);
    const bytes = fixed
      ? elementSize(spec.datatype) * elementCount(spec.dims)
      : options.variableBytes;
    return [spec.name, bytes * batch];
  }));
  return (output) => sizes.get(output) ?? options.variableBytes * batch;
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
