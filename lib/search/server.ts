/**
 * The Triton server a search loads its variants into (--triton-launch-mode):
 * local starts tritonserver with explicit model control on the output model
 * repository and stops it by its PID; remote loads each variant under the
 * model's own name through the repository API with a `config` override.
 * c_api measures in process: each point's run starts Triton's library on the
 * output repository itself, so there is nothing to load here.
 */
import { ConnectionError } from "../protocol/errors.ts";
import { UsageError } from "../types/errors.ts";
import { renameSteps, type Variant } from "./variants.ts";
import { freePort, lastLines, launch, readLog, residentMb } from "./_process.ts";

/** The server refused a variant: its message; the search goes on with the next one. */
export class VariantLoadError extends Error {
  override name = "VariantLoadError";
}

/** What a search measures: a Triton model configuration, or an engine's settings. */
export interface SearchVariant {
  /** Unique in the search: the checkpoint's points are keyed by it. */
  name: string;
  /** The model it serves. */
  model: string;
  /** A brute search's point (quick search climbs them). */
  coordinates?: { count: number; maxBatchSize?: number };
}

export interface SearchServer<V extends SearchVariant = Variant> {
  /** What the console says of it: `tritonserver (PID 123) at 127.0.0.1:8000, log FILE`. */
  readonly description: string;
  /** host:port for -u, by protocol; undefined in c_api mode. */
  url(protocol: string): string | undefined;
  /** Loads `variant`; returns the model name to measure. Throws VariantLoadError. */
  load(variant: V): Promise<string>;
  unload(variant: V): Promise<void>;
  /** Before each point of the loaded variant: options its run adds (c_api's repository). */
  preparePoint?(): Promise<Record<string, string>>;
  /** The server process's resident memory in MB (local mode), else undefined. */
  usedRamMb(): Promise<number | undefined>;
  /** True once a local server has exited. */
  readonly exited: boolean;
  /** Whether a local server died or stopped answering (false elsewhere). */
  lost(): Promise<boolean>;
  stop(): Promise<void>;
}

/** Seconds Triton waits for its models and open streams when stopped. */
const EXIT_TIMEOUT_SECS = 1;
const READY_TIMEOUT_MS = 60_000;
const READY_PROBE_MS = 2_000;

/** POSTs to the repository API; an answer other than 200 is the server's error text. */
async function repositoryCall(
  http: string,
  options: { model: string; action: "load" | "unload"; config?: Variant["config"] },
): Promise<void> {
  const body = options.config === undefined
    ? undefined
    : JSON.stringify({ parameters: { config: JSON.stringify(options.config) } });
  let response: Response;
  try {
    response = await fetch(
      `http://${http}/v2/repository/models/${encodeURIComponent(options.model)}/${options.action}`,
      { method: "POST", ...(body === undefined ? {} : { body }) },
    );
  } catch (error) {
    throw new ConnectionError(
      `Can not reach Triton's repository API at ${http}: ${(error as Error).message}`,
      http,
    );
  }
  const text = await response.text();
  if (response.status === 200) return;
  let message = text;
  try {
    message = JSON.parse(text).error ?? text;
  } catch {
    // Not JSON: the text as it is.
  }
  throw new VariantLoadError(
    `Triton refused to ${options.action} ${options.model}: ${message.trim() || response.status}`,
  );
}

async function isReady(http: string): Promise<boolean> {
  try {
    // Bounded: something else listening on the port may never answer.
    const response = await fetch(`http://${http}/v2/health/ready`, {
      signal: AbortSignal.timeout(READY_PROBE_MS),
    });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * A running server with explicit model control: each variant replaces the
 * model's configuration; stop() loads the models again from the server's
 * own repository.
 */
export function remoteServer(options: { http: string; grpc: string }): SearchServer {
  const touched = new Set<string>();
  return {
    description: `the Triton server at ${options.http} (remote)`,
    url: (protocol) => protocol === "grpc" ? options.grpc : options.http,
    async load(variant) {
      // Composing models first, each under its own name, which an ensemble's steps (or a BLS
      // model's code) then call.
      for (const v of [...(variant.composing ?? []), variant]) {
        touched.add(v.model);
        const config = v.composing && !v.bls
          ? renameSteps(
            v.config,
            (step) => v.composing!.find((c) => c.name === step)?.model ?? step,
          )
          : v.config;
        await repositoryCall(options.http, {
          model: v.model,
          action: "load",
          config: { ...config, name: v.model },
        });
      }
      return variant.model;
    },
    async unload(variant) {
      for (const v of [variant, ...(variant.composing ?? [])]) {
        await repositoryCall(options.http, { model: v.model, action: "unload" });
      }
    },
    usedRamMb: () => Promise.resolve(undefined),
    exited: false,
    lost: () => Promise.resolve(false),
    async stop() {
      for (const model of touched) {
        await repositoryCall(options.http, { model, action: "load" }).catch(() => {
          // The model's own configuration is the server's to load; the search is over.
        });
      }
      touched.clear();
    },
  };
}

/** Checks a remote server before the search starts. */
export async function checkRemote(http: string): Promise<void> {
  if (!await isReady(http)) {
    throw new ConnectionError(
      `Triton at --triton-http-endpoint ${http} is not ready (remote mode needs a running server started with --model-control-mode=explicit)`,
      http,
    );
  }
}

/**
 * A server this process neither starts nor loads (c_api's library, a remote
 * engine, a checkpoint replayed): a variant is measured as `model(variant)`;
 * nothing to unload, watch or stop.
 */
export function unmanagedServer<V extends SearchVariant>(options: {
  description: string;
  model: (variant: V) => string;
  /** -u for every protocol; undefined measures without one (c_api, a replay). */
  url?: string;
  preparePoint?: () => Promise<Record<string, string>>;
}): SearchServer<V> {
  return {
    description: options.description,
    url: () => options.url,
    ...(options.preparePoint ? { preparePoint: options.preparePoint } : {}),
    load: (variant) => Promise.resolve(options.model(variant)),
    unload: () => Promise.resolve(),
    usedRamMb: () => Promise.resolve(undefined),
    exited: false,
    lost: () => Promise.resolve(false),
    stop: () => Promise.resolve(),
  };
}

/** c_api: each point's run starts the library on the output repository and loads the variant. */
export function inProcessServer(repository: string): SearchServer {
  return unmanagedServer({
    description: "Triton's library in this process (c_api)",
    model: (variant) => variant.name,
    preparePoint: () => Promise.resolve({ "model-repository": repository }),
  });
}

export interface LocalOptions {
  /** --triton-server-path */
  serverPath: string;
  /** The output model repository the server serves. */
  repository: string;
  /** --triton-server-flags: FLAG=VALUE pairs. */
  flags: readonly string[];
  /** --triton-output-path, else a temporary file. */
  logFile?: string;
  /** triton_server_environment: set for the server over this process's environment. */
  environment?: Record<string, string>;
}

/**
 * Starts tritonserver with explicit model control on free loopback ports and
 * waits until it is ready; a start that fails says why with the log's last
 * lines. The process is killed with this one if it ends without stop().
 */
export async function startLocalServer(options: LocalOptions): Promise<SearchServer> {
  const log = options.logFile ??
    Deno.makeTempFileSync({ prefix: "inferperf_triton_", suffix: ".log" });
  const given = new Map(options.flags.map((f) => {
    const at = f.indexOf("=");
    return [
      f.slice(0, at < 0 ? f.length : at).replace(/^--/, "").replaceAll("_", "-"),
      f.slice(at + 1),
    ];
  }));
  for (const fixed of ["model-repository", "model-control-mode"]) {
    if (given.has(fixed)) {
      throw new UsageError([`--triton-server-flags can not set ${fixed}: the search sets it`]);
    }
  }
  const [httpPort, grpcPort] = [freePort(), freePort()];
  const flags = new Map<string, string>([
    ["http-address", "127.0.0.1"],
    ["grpc-address", "127.0.0.1"],
    ["http-port", String(httpPort)],
    ["grpc-port", String(grpcPort)],
    ["exit-timeout-secs", String(EXIT_TIMEOUT_SECS)],
    ...given,
    ["model-repository", options.repository],
    ["model-control-mode", "explicit"],
    ["log-file", log],
  ]);
  const launched = await launch(
    [options.serverPath, ...[...flags].map(([k, v]) => `--${k}=${v}`)],
    options.environment ? { env: options.environment } : {},
  );
  if (launched === undefined) {
    throw new UsageError([
      `Can not start the Triton server "${options.serverPath}": not found (set --triton-server-path)`,
    ]);
  }
  const { pid, status, stop } = launched;
  const http = `127.0.0.1:${flags.get("http-port")}`;
  const grpc = `127.0.0.1:${flags.get("grpc-port")}`;

  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (!await isReady(http)) {
    if (launched.exited || performance.now() > deadline) {
      const code = launched.exited
        ? `exited with code ${(await status).code}`
        : "was not ready in time";
      await stop();
      throw new ConnectionError(
        `The Triton server ${options.serverPath} ${code}; its output ends: ${
          lastLines(`${launched.stderr()}\n${readLog(log)}`, 5)
        } (log: ${log})`,
        http,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    description: `${options.serverPath} (PID ${pid}) at ${http}, log ${log}`,
    url: (protocol) => protocol === "grpc" ? grpc : http,
    async load(variant) {
      // Triton loads an ensemble's composing models with it (its steps name their variants).
      await repositoryCall(http, { model: variant.name, action: "load" });
      return variant.name;
    },
    async unload(variant) {
      // ... but keeps them loaded when it is unloaded.
      for (const v of [variant, ...(variant.composing ?? [])]) {
        await repositoryCall(http, { model: v.name, action: "unload" });
      }
    },
    usedRamMb: () => residentMb(pid),
    get exited() {
      return launched.exited;
    },
    lost: async () => launched.exited || !await isReady(http),
    stop,
  };
}
