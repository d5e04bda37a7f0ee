/**
 * The reference inference server: simulated models with known latency,
 * instances and batching behind a KServe v2 / Triton HTTP front end and a
 * Prometheus metrics endpoint, and gRPC (KServe and TF Serving) on our
 * HTTP/2 layer. `inferperf demo` profiles it; tests use it as ground truth.
 * May import lib/types, lib/input and lib/protocol (the wire formats it
 * shares with the clients); only lib/commands imports it.
 *
 * @module
 */
export {
  type BehaviourKind,
  type ComputeDistribution,
  type DecoupledConfig,
  DEFAULT_MODELS,
  type DynamicBatchingConfig,
  type LlmConfig,
  loadModelConfig,
  type ModelConfig,
  ModelConfigError,
  parseModelConfig,
  type SequenceBatchingConfig,
  type TensorConfig,
  validateModelConfigs,
} from "./config.ts";
export type { Clock } from "./model.ts";
export type { GrpcTlsOptions } from "./grpc.ts";
export type { FaultConfig } from "./faults.ts";
export { type RunningServer, SERVER_NAME, type ServerOptions, startServer } from "./server.ts";
export { ServerStartError, startServerInWorker } from "./worker_client.ts";
export type { WorkerServerOptions } from "./worker.ts";
