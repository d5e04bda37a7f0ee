/** `inferperf serve`: the reference server in the foreground. */
import { buildServeConfig } from "../cli/serve_config.ts";
import type { RawOptions } from "../cli/options.ts";
import { UsageError } from "../types/errors.ts";
import type { Outcome } from "./outcome.ts";
import { engineProblem, engineStepMs } from "../server/engine.ts";

/** Runs the reference server until SIGINT or SIGTERM. */
export async function serveCommand(raw: RawOptions): Promise<Outcome> {
  const config = buildServeConfig(raw);
  const problem = config.engine && engineProblem(config.engine);
  // An engine refuses settings it can not run, at start: a configuration search reports the line.
  if (problem) throw new UsageError([`The LLM engine can not start: ${problem}`]);
  // The reference server (YAML, protobuf, HTTP/2) loads only for the commands that run it.
  const { loadModelConfig, startServer } = await import("../server/mod.ts");
  const models = config.models ? await loadModelConfig(config.models) : undefined;
  const read = (path: string, option: string) => {
    try {
      return Deno.readTextFileSync(path);
    } catch (error) {
      throw new UsageError([
        `Cannot read "${path}" given to ${option}: ${(error as Error).message}`,
      ]);
    }
  };
  const { grpcCertificateFile: cert, grpcPrivateKeyFile: key, grpcClientCaFile: ca } = config;
  const grpcTls = cert !== undefined && key !== undefined
    ? {
      cert: read(cert, "--grpc-certificate-file"),
      key: read(key, "--grpc-private-key-file"),
      ...(ca === undefined ? {} : { clientCaCerts: [read(ca, "--grpc-client-ca-file")] }),
    }
    : undefined;
  checkPorts(config.host, [
    ["--http-port", config.httpPort],
    ["--grpc-port", config.grpcPort],
    ["--metrics-port", config.metricsPort],
    ["--tfserving-port", config.tfservingPort],
  ]);
  const server = await startServer({
    ...(models ? { models } : {}),
    ...(config.modelRepository === undefined ? {} : { modelRepository: config.modelRepository }),
    modelControlMode: config.modelControlMode,
    loadModels: config.loadModels,
    host: config.host,
    httpPort: config.httpPort,
    metricsPort: config.metricsPort,
    grpcPort: config.grpcPort,
    ...(config.tfservingPort === undefined ? {} : { tfservingPort: config.tfservingPort }),
    ...(grpcTls ? { grpcTls } : {}),
    ...(config.engine ? { engine: config.engine } : {}),
  });
  const grpcKind = grpcTls === undefined ? "" : ca === undefined ? " (TLS)" : " (mutual TLS)";
  const tfserving = server.tfservingPort === undefined
    ? ""
    : `, TF Serving gRPC on ${config.host}:${server.tfservingPort}`;
  const engine = config.engine
    ? `; the LLM engine "engine" with ${config.engine.slots} slots, a ${
      engineStepMs(config.engine)
    } ms decode step, its /metrics on the HTTP port`
    : "";
  console.log(
    `Serving KServe v2, TorchServe and OpenAI-compatible HTTP on ${server.addr}, gRPC on ${server.grpcAddr}${grpcKind}${tfserving}, metrics on ${config.host}:${server.metricsPort}/metrics${engine} (Ctrl-C to stop)`,
  );
  await new Promise<void>((resolve) => {
    Deno.addSignalListener("SIGINT", resolve);
    Deno.addSignalListener("SIGTERM", resolve);
  });
  await server.close();
  return "ok";
}

/**
 * Names every port that cannot be listened on, before the server starts:
 * Deno's AddrInUse does not say which of the server's ports it was.
 */
function checkPorts(host: string, ports: Array<[string, number | undefined]>): void {
  const errors: string[] = [];
  for (const [flag, port] of ports) {
    if (port === undefined || port <= 0) continue;
    try {
      Deno.listen({ hostname: host, port }).close();
    } catch (error) {
      if (error instanceof Deno.errors.NotCapable) throw error;
      const reason = error instanceof Deno.errors.AddrInUse
        ? "the address is already in use"
        : (error as Error).message;
      errors.push(`Cannot listen on ${host}:${port} (${flag}): ${reason}`);
    }
  }
  if (errors.length > 0) throw new UsageError(errors);
}
