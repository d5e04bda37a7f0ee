/**
 * Web Worker entry that runs the reference server on its own thread, so the
 * load generator and the server do not share an event loop.
 *
 * Messages in: {type: "start", options} then {type: "close"}.
 * Messages out: {type: "started", httpPort, metricsPort, addr, grpcPort, grpcAddr},
 * {type: "error", message},
 * {type: "closed"}.
 */
import { type RunningServer, type ServerOptions, startServer } from "./server.ts";

/** Options that survive structured cloning (no signal, clock or random source). */
export type WorkerServerOptions = Omit<ServerOptions, "signal" | "clock" | "random">;

export type WorkerRequest = { type: "start"; options: WorkerServerOptions } | { type: "close" };

export type WorkerReply =
  | {
    type: "started";
    httpPort: number;
    metricsPort: number;
    addr: string;
    grpcPort: number;
    grpcAddr: string;
  }
  | { type: "error"; message: string }
  | { type: "closed" };

interface WorkerScope {
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerReply): void;
  close(): void;
}

const scope = self as unknown as WorkerScope;
let server: RunningServer | undefined;

scope.onmessage = async (event) => {
  const request = event.data;
  if (request.type === "start") {
    try {
      server = await startServer(request.options);
      const { httpPort, metricsPort, addr, grpcPort, grpcAddr } = server;
      scope.postMessage({ type: "started", httpPort, metricsPort, addr, grpcPort, grpcAddr });
    } catch (error) {
      scope.postMessage({ type: "error", message: (error as Error).message });
    }
  } else {
    await server?.close();
    scope.postMessage({ type: "closed" });
    scope.close();
  }
};
