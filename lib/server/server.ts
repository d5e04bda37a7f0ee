/**
 * Starts the reference server: the simulated models behind each protocol
 * front end. The HTTP port serves KServe v2 (/v2/...), TorchServe
 * (/predictions/..., /ping) and the LLM APIs (/v1/..., /rerank, /generate...) side by
 * side; every gRPC port serves KServe v2 and TF Serving's PredictionService.
 */
import denoConfig from "../../deno.json" with { type: "json" };
import { DEFAULT_MODELS, type ModelConfig, resolveModelSpecs } from "./config.ts";
import { SimulatedGpus } from "./gpu.ts";
import { type GrpcServer, type GrpcTlsOptions, serveGrpc } from "./grpc.ts";
import { createKServeHandler } from "./kserve_http.ts";
import { createMetricsHandler } from "./metrics.ts";
import { createOpenAiHandler, isLlmPath } from "./openai.ts";
import { engineModel, type EngineSettings, SlotEngine } from "./engine.ts";
import { SharedMemoryRegistry } from "./shm.ts";
import { TraceSettingsStore } from "./trace.ts";
import { createTorchServeHandler } from "./torchserve.ts";
import type { Clock } from "./model.ts";
import { ModelControl, type ModelControlMode, ModelRepository } from "./repository.ts";
import { ModelDirectory } from "./triton_models.ts";
import { ModelConfigError } from "./config_types.ts";
import { ServerError } from "./errors.ts";
import { type HttpServer, serveHttp } from "./_http.ts";

export const SERVER_NAME = "inferperf-reference";
const encoder = new TextEncoder();

export interface ServerOptions {
  /** Default DEFAULT_MODELS. */
  models?: readonly ModelConfig[];
  /** Default "127.0.0.1". */
  host?: string;
  /** KServe v2 HTTP port; 0 (the default) picks a free port. */
  httpPort?: number;
  /** Prometheus metrics port; 0 (the default) picks a free port. */
  metricsPort?: number;
  /** KServe v2 gRPC port; 0 (the default) picks a free port. */
  grpcPort?: number;
  /**
   * A second gRPC port, TF Serving's default 8500 for `inferperf serve`, so
   * --service-kind tfserving finds the server without -u. Absent: none.
   */
  tfservingPort?: number;
  /** Serve gRPC over TLS (and require client certificates when `clientCaCerts` is set). */
  grpcTls?: GrpcTlsOptions;
  /**
   * Where system shared-memory keys resolve, instead of /dev/shm: tests use a
   * temporary directory, as Deno grants /dev only to --allow-all programs.
   */
  sharedMemoryDirectory?: string;
  /** Aborting closes the server. */
  signal?: AbortSignal;
  /** Substitutes the time source of the simulated models (tests). */
  clock?: Clock;
  /** Substitutes the uniform [0, 1) source of compute-time distributions (tests). */
  random?: () => number;
  /** The tunable LLM engine (engine.ts): its model `engine` beside `models`, its /metrics. */
  engine?: EngineSettings;
  /**
   * A Triton model repository directory (triton_models.ts): its models beside `models` (then no
   * built-in ones), loaded at start with model control "none", by the repository API with
   * "explicit".
   */
  modelRepository?: string;
  /** Default "none": every model loaded at start, loads and unloads refused, as Triton's. */
  modelControlMode?: ModelControlMode;
  /** With "explicit": the directory's models loaded at start ("*": all). Default none. */
  loadModels?: readonly string[];
}

export interface RunningServer {
  httpPort: number;
  metricsPort: number;
  /** host:port of the HTTP front end, as `-u` takes it. */
  addr: string;
  grpcPort: number;
  /** host:port of the gRPC front end, as `-u` takes it with `-i grpc`. */
  grpcAddr: string;
  /** The TF Serving port, when `tfservingPort` was given. */
  tfservingPort?: number;
  /** Fails requests still running, then closes every listener and connection. */
  close(): Promise<void>;
}

function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The directory's models `names` ("*": all) as specifications; every problem at once. */
function directoryModels(directory: ModelDirectory | undefined, names: readonly string[]) {
  if (directory === undefined || names.length === 0) return [];
  const problems: string[] = [];
  const models = (names.includes("*") ? directory.names() : names).flatMap((name) => {
    try {
      return [directory.model(name)];
    } catch (error) {
      if (!(error instanceof ServerError)) throw error;
      problems.push(error.message.trim());
      return [];
    }
  });
  if (problems.length > 0) throw new ModelConfigError(directory.path, problems);
  return models.length > 0 ? resolveModelSpecs(models, directory.path) : [];
}

/** Validates the models (rejecting with a ModelConfigError) and starts listening. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const { signal } = options;
  signal?.throwIfAborted();
  const host = options.host ?? "127.0.0.1";
  const engine = options.engine && new SlotEngine(options.engine);
  const directory = options.modelRepository === undefined
    ? undefined
    : new ModelDirectory(options.modelRepository);
  const configured = [
    ...options.models ?? (directory ? [] : DEFAULT_MODELS),
    ...(options.engine ? [engineModel(options.engine)] : []),
  ];
  const mode = options.modelControlMode ?? "none";
  // A model repository alone may start empty (explicit model control).
  const specs = configured.length > 0 || directory === undefined
    ? resolveModelSpecs(configured, "options.models")
    : [];
  specs.push(...directoryModels(directory, mode === "none" ? ["*"] : options.loadModels ?? []));
  const gpus = new SimulatedGpus();
  const repository = new ModelRepository(specs, {
    clock: options.clock,
    random: options.random,
    load: gpus,
  });
  const identity = { name: SERVER_NAME, version: denoConfig.version };
  const sharedMemory = new SharedMemoryRegistry({ directory: options.sharedMemoryDirectory });
  const trace = new TraceSettingsStore();
  const control = new ModelControl(repository, {
    mode,
    ...(directory ? { directory } : {}),
    configured,
  });
  const kserve = createKServeHandler(repository, identity, { sharedMemory, trace, control });
  const torchserve = createTorchServeHandler(repository);
  const openai = createOpenAiHandler(repository, {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(engine ? { engine } : {}),
  });
  const http = serveHttp(
    (request) =>
      engine && request.path === "/metrics"
        ? {
          status: 200,
          contentType: "text/plain; version=0.0.4",
          body: encoder.encode(engine.metricsText()),
        }
        : request.path.startsWith("/v1/") || isLlmPath(request.path)
        ? openai.handle(request)
        : request.path.startsWith("/predictions/") || request.path === "/ping"
        ? torchserve(request)
        : kserve(request),
    { hostname: host, port: options.httpPort ?? 0 },
  );
  let metrics: HttpServer;
  let grpc: GrpcServer;
  let tfserving: GrpcServer | undefined;
  try {
    metrics = serveHttp(createMetricsHandler(repository, gpus), {
      hostname: host,
      port: options.metricsPort ?? 0,
    });
  } catch (error) {
    await http.close();
    throw error;
  }
  try {
    grpc = await serveGrpc(repository, identity, {
      hostname: host,
      port: options.grpcPort ?? 0,
      tls: options.grpcTls,
      sharedMemory,
      trace,
    });
  } catch (error) {
    await Promise.all([http.close(), metrics.close()]);
    throw error;
  }
  if (options.tfservingPort !== undefined) {
    try {
      tfserving = await serveGrpc(repository, identity, {
        hostname: host,
        port: options.tfservingPort,
        sharedMemory,
        trace,
      });
    } catch (error) {
      await Promise.all([http.close(), metrics.close(), grpc.close()]);
      throw error;
    }
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      signal?.removeEventListener("abort", close);
      repository.close();
      openai.close();
      await Promise.all([http.close(), metrics.close(), grpc.close(), tfserving?.close()]);
      sharedMemory.close();
    })();
    return closing;
  };
  signal?.addEventListener("abort", close);
  return {
    httpPort: http.port,
    metricsPort: metrics.port,
    addr: hostPort(host, http.port),
    grpcPort: grpc.port,
    grpcAddr: hostPort(host, grpc.port),
    ...(tfserving ? { tfservingPort: tfserving.port } : {}),
    close,
  };
}
