/**
 * What --service-kind and --shared-memory change in a run: the client
 * (TF Serving, TorchServe, OpenAI-compatible), the requests of OpenAI runs
 * (payload files or synthetic prompts), and the shared-memory regions of
 * Triton runs, registered before the load and released after it.
 */
import { type ProfileConfig, UsageError } from "../cli/config.ts";
import { loadLlmData } from "../input/llm_data.ts";
import { hasSharedMemoryControl, SystemSharedMemory } from "../protocol/shm.ts";
import type { InferenceClient, InferRequest, ModelInfo, ServerInfo } from "../protocol/types.ts";
import { buildRequests, checkBatchSize, type RequestPlan } from "./inputs.ts";
import { grpcTls, httpsTls } from "./tls.ts";

/**
 * The client of a service kind other than triton; undefined for triton. The
 * protocol modules load only for the kind in use.
 */
export async function createServiceClient(
  config: ProfileConfig,
  options: { requestTimeoutMs?: number },
): Promise<InferenceClient | undefined> {
  const common = { url: config.url, headers: config.headers, ...options };
  switch (config.serviceKind) {
    case "triton":
      return undefined;
    case "tfserving": {
      const { TfServingClient } = await import("../protocol/tfserving.ts");
      return new TfServingClient({
        ...common,
        compression: config.grpcCompression,
        tls: grpcTls(config.grpcSsl),
        signatureName: config.modelSignatureName,
        batchSize: config.batchSize,
      });
    }
    case "torchserve": {
      const { TorchServeClient } = await import("../protocol/torchserve.ts");
      return new TorchServeClient({ ...common, tls: httpsTls(config.httpsSsl) });
    }
    case "openai": {
      const { OpenAiClient } = await import("../protocol/openai.ts");
      return new OpenAiClient({
        ...common,
        endpoint: config.endpoint,
        tls: httpsTls(config.httpsSsl),
      });
    }
    case "triton_c_api": {
      const { startCApiClient } = await import("../protocol/triton_c_api/mod.ts");
      return await startCApiClient(config, options);
    }
  }
}

/** The requests of the run: OpenAI payloads or synthetic prompts, else input data as usual. */
export async function buildServiceRequests(
  model: ModelInfo,
  config: ProfileConfig,
): Promise<RequestPlan> {
  if (config.serviceKind !== "openai") return await buildRequests(model, config);
  checkBatchSize(model, config.batchSize);
  const dataSet = await loadLlmData({
    model: config.model,
    endpoint: config.endpoint,
    paths: config.inputData.paths,
    synthetic: config.syntheticPrompts,
  });
  const requests = dataSet.streams[0].map((step) => ({ inputs: step.inputs, outputs: [] }));
  return { requests, dataSet };
}

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
  options: { config: ProfileConfig; server: ServerInfo; requests: readonly InferRequest[] },
): Promise<SharedMemorySession | undefined> {
  const { config, server } = options;
  if (config.sharedMemory !== "system") return undefined;
  if (!hasSharedMemoryControl(client) || !server.extensions.includes("system_shared_memory")) {
    throw new UsageError([
      `--shared-memory system needs a server with Triton's system shared-memory extension; ` +
      `"${server.name || config.url}" does not list "system_shared_memory"`,
    ]);
  }
  let memory: SystemSharedMemory;
  try {
    memory = new SystemSharedMemory(options.requests, {
      outputByteSize: config.outputSharedMemorySize,
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
