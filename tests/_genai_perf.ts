/**
 * genai-perf, unchanged, with this checkout's inferperf as its
 * `perf_analyzer` (a shim first on PATH runs `deno run main.ts`): from
 * `../shared/genai-perf` (or `GENAI_PERF_DIR`), installed into
 * `GENAI_PERF_VENV` or a cached venv (tests/_python_tool.ts).
 */
import { findTool } from "./_python_tool.ts";

export { perfAnalyzerShim } from "./_python_tool.ts";

export interface GenaiPerf {
  /** The genai-perf executable of the venv. */
  bin: string;
  /** The Hugging Face tokenizer directory of the llama.cpp model (--tokenizer). */
  tokenizer: string;
}

/** genai-perf ready to run (installed first when needed), or why not. */
export async function findGenaiPerf(): Promise<GenaiPerf | { reason: string }> {
  const found = await findTool({
    folder: "genai-perf",
    dirVariable: "GENAI_PERF_DIR",
    venvVariable: "GENAI_PERF_VENV",
  });
  if ("reason" in found) return found;
  return { bin: `${found.venv}/bin/genai-perf`, tokenizer: `${found.dir}/tokenizer-llama-spm` };
}

export interface GenaiPerfRun {
  code: number;
  /** stdout and stderr, interleaved as far as the pipes tell. */
  output: string;
}

/** Runs `genai-perf ARGS` with `shimDir` first on PATH; SIGKILL after `timeoutMs`. */
export async function runGenaiPerf(
  genaiPerf: GenaiPerf,
  args: readonly string[],
  options: { shimDir: string; cwd: string; timeoutMs?: number },
): Promise<GenaiPerfRun> {
  const child = new Deno.Command(genaiPerf.bin, {
    args: [...args],
    cwd: options.cwd,
    env: {
      PATH: `${options.shimDir}:${Deno.env.get("PATH") ?? ""}`,
      // The tokenizer is a local directory; no hub is reachable.
      HF_HUB_OFFLINE: "1",
      TRANSFORMERS_OFFLINE: "1",
      // Wide enough that genai-perf's log lines (the perf_analyzer command) are not wrapped.
      COLUMNS: "400",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  const { code, stdout, stderr } = await child.output();
  clearTimeout(timer);
  const decoder = new TextDecoder();
  return { code, output: decoder.decode(stdout) + decoder.decode(stderr) };
}
