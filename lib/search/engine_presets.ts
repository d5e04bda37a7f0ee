/**
 * Engine presets (`engine: {preset: NAME}`): each engine's launch command
 * template, readiness check and cache reset, from its own documentation.
 * Every engine here serves its Prometheus metrics on the API port's
 * /metrics, which each point scrapes (lib/measure/llm_server_metrics.ts
 * knows their names). Parameters whose names start with `-` are appended
 * to the command as flags, so a preset's engine_parameters are its flags:
 * `-np: [1, 2, 4]` for llama.cpp, `--max-num-seqs: [64, 128]` for vLLM.
 */

/** How a point's cache is cleared: llama.cpp's slot erase, or one request. */
export type CacheClear = { kind: "llama.cpp-slots" } | {
  kind: "request";
  method: "POST" | "GET";
  path: string;
};

export interface ReadyCheck {
  /** GET this path until it answers `status`... */
  path?: string;
  status: number;
  /** ... or wait for this text in the engine's log. */
  log?: string;
  timeoutMs: number;
}

export interface EnginePreset {
  /** The command template; `{model}` is a parameter the user gives. */
  command: string;
  ready: ReadyCheck;
  clearCache?: CacheClear;
  /** Environment the cache reset needs (vLLM's dev routes). */
  clearCacheEnv?: Record<string, string>;
  /** Arguments the cache reset needs, given the variant's log directory (llama.cpp's slot actions). */
  clearCacheArgs?: (directory: string) => string[];
}

const MINUTE = 60_000;

export const ENGINE_PRESETS: Readonly<Record<string, EnginePreset>> = {
  // llama.cpp's server README: /health is 503 while the model loads, 200 when ready; --metrics
  // enables /metrics; POST /slots/ID?action=erase empties a slot's cache, answered 501 unless the
  // server has a --slot-save-path (erasing writes nothing there).
  "llama.cpp": {
    command: "llama-server -m {model} --host {host} --port {port} --metrics",
    ready: { path: "/health", status: 200, timeoutMs: 2 * MINUTE },
    clearCache: { kind: "llama.cpp-slots" },
    clearCacheArgs: (directory) => ["--slot-save-path", directory],
  },
  // vLLM's OpenAI-compatible server: `vllm serve MODEL`, /health, /metrics; POST
  // /reset_prefix_cache exists only with VLLM_SERVER_DEV_MODE=1.
  vllm: {
    command: "vllm serve {model} --host {host} --port {port}",
    ready: { path: "/health", status: 200, timeoutMs: 10 * MINUTE },
    clearCache: { kind: "request", method: "POST", path: "/reset_prefix_cache" },
    clearCacheEnv: { VLLM_SERVER_DEV_MODE: "1" },
  },
  // SGLang: `python3 -m sglang.launch_server`, /health, /metrics with --enable-metrics, POST
  // /flush_cache empties the radix cache.
  sglang: {
    command:
      "python3 -m sglang.launch_server --model-path {model} --host {host} --port {port} --enable-metrics",
    ready: { path: "/health", status: 200, timeoutMs: 10 * MINUTE },
    clearCache: { kind: "request", method: "POST", path: "/flush_cache" },
  },
  // Text Generation Inference: text-generation-launcher, /health, /metrics; it has no cache reset.
  tgi: {
    command: "text-generation-launcher --model-id {model} --hostname {host} --port {port}",
    ready: { path: "/health", status: 200, timeoutMs: 10 * MINUTE },
  },
};
