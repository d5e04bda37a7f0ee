/** Runs the reference server in a Web Worker (lib/server/worker.ts). */
import type { RunningServer } from "./server.ts";
import type { WorkerReply, WorkerRequest, WorkerServerOptions } from "./worker.ts";
import { WORKER_URL } from "./worker_url.ts";

/** The server failed to start inside the worker. */
export class ServerStartError extends Error {
  override name = "ServerStartError";
}

function nextReply(worker: Worker): Promise<WorkerReply> {
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<WorkerReply>) => resolve(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new ServerStartError(`Server worker failed: ${event.message}`));
    };
  });
}

/** Starts the server on a second thread; close() stops it and ends the worker. */
export async function startServerInWorker(
  options: WorkerServerOptions = {},
): Promise<RunningServer> {
  const worker = new Worker(WORKER_URL, { type: "module" });
  const post = (request: WorkerRequest) => worker.postMessage(request);
  let reply: WorkerReply;
  try {
    const started = nextReply(worker);
    post({ type: "start", options });
    reply = await started;
  } catch (error) {
    worker.terminate();
    throw error;
  }
  if (reply.type !== "started") {
    worker.terminate();
    throw new ServerStartError(reply.type === "error" ? reply.message : "Server worker closed");
  }
  let closing: Promise<void> | undefined;
  return {
    httpPort: reply.httpPort,
    metricsPort: reply.metricsPort,
    addr: reply.addr,
    grpcPort: reply.grpcPort,
    grpcAddr: reply.grpcAddr,
    close() {
      closing ??= (async () => {
        const closed = nextReply(worker);
        post({ type: "close" });
        try {
          await closed;
        } finally {
          worker.terminate();
        }
      })();
      return closing;
    },
  };
}
