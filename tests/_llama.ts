/**
 * llama.cpp's llama-server with the tiny model of `../shared/llama` beside
 * the repository (or `LLAMA_DIR`): a real OpenAI-compatible LLM server,
 * started on a free loopback port with four slots and its metrics, and
 * stopped by its PID. `counts()` is what the server itself counted: the
 * requests it finished (its log's slot releases) and the tokens it
 * generated (`llamacpp:tokens_predicted_total`).
 */
import { freePort } from "../bench/process.ts";

const FROM_ENV = Deno.env.get("LLAMA_DIR");
/** The llama.cpp directory: LLAMA_DIR, else ../shared/llama beside the repository. */
export const LLAMA_DIR = (FROM_ENV ?? new URL("../../shared/llama/", import.meta.url).pathname)
  .replace(/\/+$/, "");
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

function findLlama(): { dir: string } | { reason: string } {
  try {
    Deno.statSync(`${LLAMA_DIR}/bin/llama-server`);
    Deno.statSync(`${LLAMA_DIR}/models/tiny.gguf`);
    return { dir: LLAMA_DIR };
  } catch {
    const where = FROM_ENV === undefined ? "beside the repository" : "from LLAMA_DIR";
    return { reason: `no ${LLAMA_DIR}/bin/llama-server and models/tiny.gguf (${where})` };
  }
}

export const llama = findLlama();

export interface ServerCounts {
  /** Requests the server finished (one slot release each). */
  requests: number;
  /** Tokens it generated. */
  tokens: number;
}

export interface LlamaServer {
  /** host:port */
  addr: string;
  counts(): Promise<ServerCounts>;
  /** SIGTERM (SIGKILL after a grace period); resolves once the process is gone. */
  stop(): Promise<void>;
}

/** The server's own counts since it started. */
async function countsOf(addr: string, log: string): Promise<ServerCounts> {
  const metrics = await (await fetch(`http://${addr}/metrics`)).text();
  const tokens = /^llamacpp:tokens_predicted_total (\S+)$/m.exec(metrics);
  if (tokens === null) throw new Error(`No llamacpp:tokens_predicted_total in /metrics`);
  const text = await Deno.readTextFile(log);
  return { requests: text.match(/ release: .* stop processing/g)?.length ?? 0, tokens: +tokens[1] };
}

async function ready(addr: string, status: Promise<Deno.CommandStatus>): Promise<void> {
  let exited: Deno.CommandStatus | undefined;
  status.then((s) => exited = s);
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (exited !== undefined) throw new Error(`llama-server exited with code ${exited.code}`);
    try {
      const response = await fetch(`http://${addr}/health`);
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`llama-server was not ready within ${READY_TIMEOUT_MS} ms`);
}

/**
 * Starts llama-server (-np 4 unless told, --metrics -t 1, as its README says) and waits
 * until it is ready. A port taken between choosing and binding makes it
 * exit; the start is retried.
 */
export async function startLlama(options: StartOptions = {}): Promise<LlamaServer> {
  for (let attempt = 1;; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

export interface StartOptions {
  /** Another GGUF than the tiny model (tests/_gguf.ts writes some). */
  model?: string;
  /** Its slots (`-np`), default 4. */
  parallel?: number;
  /** More server flags, e.g. --jinja (the GGUF's own chat template). */
  args?: string[];
}

async function startOnce(options: StartOptions): Promise<LlamaServer> {
  if ("reason" in llama) throw new Error(llama.reason);
  const dir = await Deno.makeTempDir({ prefix: "inferperf_llama_" });
  const log = `${dir}/llama.log`;
  const addr = `127.0.0.1:${freePort()}`;
  const child = new Deno.Command(`${llama.dir}/bin/llama-server`, {
    args: [
      ...["-m", options.model ?? `${llama.dir}/models/tiny.gguf`, "--host", "127.0.0.1"],
      ...["--port", addr.split(":")[1], "-c", "8192"],
      ...["-np", String(options.parallel ?? 4), "--metrics", "-t", "1"],
      ...["--log-file", log, ...options.args ?? []],
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const killNow = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
  };
  // A test run that ends without stopping the server (a filter, a failure) must not leave it.
  addEventListener("unload", killNow);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already exited.
      }
      const timer = setTimeout(killNow, STOP_GRACE_MS);
      await child.status;
      clearTimeout(timer);
      removeEventListener("unload", killNow);
      await Deno.remove(dir, { recursive: true });
    })();
  try {
    await ready(addr, child.status);
  } catch (error) {
    await stop();
    throw error;
  }
  return { addr, counts: () => countsOf(addr, log), stop };
}
