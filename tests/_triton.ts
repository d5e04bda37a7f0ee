/**
 * The real Triton server for end-to-end tests: `bin/tritonserver` from
 * `../shared/tritonserver` beside the repository (or `TRITONSERVER_DIR`),
 * started on free loopback ports with the model repository of
 * fixtures/triton/models (Triton's identity backend), and stopped by its PID.
 * Where the directory is absent, `triton` says why and the tests that need it
 * are skipped.
 */

// The bench's helper: bench/triton.ts starts the server through this module too.
import { freePort } from "../bench/process.ts";

const FROM_ENV = Deno.env.get("TRITONSERVER_DIR");
/** The Triton install the tests use: TRITONSERVER_DIR, else ../shared/tritonserver beside the repository. */
export const TRITON_DIR = (FROM_ENV ??
  new URL("../../shared/tritonserver/", import.meta.url).pathname).replace(/\/+$/, "");
const TRITON_MODELS = new URL("../fixtures/triton/models/", import.meta.url).pathname;
const READY_TIMEOUT_MS = 30_000;
/**
 * SIGTERM, then SIGKILL after this long. Triton waits --exit-timeout-secs for
 * its gRPC handlers even with no client left (it counts 3 when idle), then
 * unloads its models: 2.4-2.5 s with 1 s on an idle 2-core machine.
 */
const STOP_GRACE_MS = 10_000;

function findTriton(): { dir: string } | { reason: string } {
  const dir = TRITON_DIR;
  try {
    Deno.statSync(`${dir}/bin/tritonserver`);
    return { dir };
  } catch {
    const where = FROM_ENV === undefined ? "beside the repository" : "from TRITONSERVER_DIR";
    return { reason: `no ${dir}/bin/tritonserver (${where})` };
  }
}

export const triton = findTriton();

export interface TritonServer {
  /** host:port of the HTTP endpoint. */
  http: string;
  /** host:port of the gRPC endpoint. */
  grpc: string;
  /**
   * SIGTERM, SIGKILL after a grace period; resolves once the process is
   * gone, with whether it had to be killed and its log.
   */
  stop(): Promise<{ killed: boolean; log: string }>;
}

async function readyOrExit(
  http: string,
  options: { status: Promise<Deno.CommandStatus>; log: string },
): Promise<void> {
  let exited: Deno.CommandStatus | undefined;
  options.status.then((s) => exited = s);
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (exited !== undefined) {
      let log = "";
      try {
        log = Deno.readTextFileSync(options.log).split("\n").slice(-15).join("\n");
      } catch {
        // No log yet: the executable itself failed to start (e.g. a missing library).
      }
      throw new Error(`tritonserver exited with code ${exited.code} before it was ready:\n${log}`);
    }
    try {
      const response = await fetch(`http://${http}/v2/health/ready`);
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`tritonserver was not ready within ${READY_TIMEOUT_MS} ms (log: ${options.log})`);
}

/**
 * Starts tritonserver on free ports with fixtures/triton/models (or
 * `repository`) and `args` (TLS, say) and waits until it is ready. A port taken between choosing and
 * binding makes Triton exit; the start is retried.
 */
export async function startTriton(
  options: { args?: string[]; repository?: string } = {},
): Promise<TritonServer> {
  if ("reason" in triton) throw new Error(triton.reason);
  for (let attempt = 1;; attempt++) {
    const logDir = await Deno.makeTempDir({ prefix: "inferperf_triton_" });
    const [httpPort, grpcPort] = [freePort(), freePort()];
    const log = `${logDir}/triton.log`;
    const child = new Deno.Command(`${triton.dir}/bin/tritonserver`, {
      args: [
        `--model-repository=${options.repository ?? TRITON_MODELS}`,
        `--backend-directory=${triton.dir}/backends`,
        "--http-address=127.0.0.1",
        `--http-port=${httpPort}`,
        "--grpc-address=127.0.0.1",
        `--grpc-port=${grpcPort}`,
        "--allow-client-shm=true",
        // Triton otherwise waits 30 s for open gRPC streams when stopped.
        "--exit-timeout-secs=1",
        `--log-file=${log}`,
        ...(options.args ?? []),
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const http = `127.0.0.1:${httpPort}`;
    let stopped: Promise<{ killed: boolean; log: string }> | undefined;
    const stop = () =>
      stopped ??= (async () => {
        const kill = (signal: Deno.Signal) => {
          try {
            child.kill(signal);
          } catch {
            // Already exited.
          }
        };
        kill("SIGTERM");
        const timer = setTimeout(() => kill("SIGKILL"), STOP_GRACE_MS);
        const status = await child.status;
        clearTimeout(timer);
        removeEventListener("unload", killNow);
        const text = await Deno.readTextFile(log).catch(() => "");
        await Deno.remove(logDir, { recursive: true });
        return { killed: status.signal === "SIGKILL", log: text };
      })();
    // A test run that ends without stopping the server (a filter, a failure) must not leave it.
    const killNow = () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already exited.
      }
    };
    addEventListener("unload", killNow);
    try {
      await readyOrExit(http, { status: child.status, log });
      return { http, grpc: `127.0.0.1:${grpcPort}`, stop };
    } catch (error) {
      await stop();
      if (attempt === 3) throw error;
    }
  }
}

/**
 * Arguments that send identity_fp32 through system shared memory (its output
 * slot sized from the model; the CLI needs -A for /dev/shm).
 */
export function sharedMemoryArgs(target: readonly string[]): string[] {
  return ["-m", "identity_fp32", ...target, "--shared-memory", "system"];
}

let warned = false;

/** A test that needs the real server; skipped, saying why once, when there is none. */
export function tritonTest(name: string, fn: () => Promise<void>): void {
  if ("reason" in triton && !warned) {
    warned = true;
    console.warn(`Skipping the real-Triton tests: ${triton.reason}.`);
  }
  Deno.test({ name: `real Triton: ${name}`, ignore: "reason" in triton, fn });
}
