/**
 * The LLM stream case: inferperf streaming 64 chat answers of 200 tokens at
 * 5 ms ITL (12,800 tokens/s) from bench/llm_server.ts, in a process of its
 * own. Reports the client's CPU per streamed token (steady state, from
 * /proc) and what the client adds to the measured inter-token latency: its
 * ITL p99 (per request, and of every gap) minus the server's own, computed
 * from when the server actually wrote each token.
 */
import * as inferperf from "./inferperf.ts";
import { freePort, runSampled, steadyState, waitForPort } from "./process.ts";
import type { BenchRow, CaseResult } from "./types.ts";

export interface LlmStreamOptions {
  concurrency: number;
  tokens: number;
  itlMs: number;
  /** Rounds of `concurrency` answers measured (one window). */
  rounds: number;
}

/** Issue 14: the client adds less than this to the measured ITL p99. */
const TARGET_ADDED_MS = 0.2;
const TTFT_MS = 20;
const SAMPLE_MS = 250;

/** The p-th percentile of unsorted values (nearest rank). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

export async function llmStream(options: LlmStreamOptions): Promise<CaseResult> {
  const port = freePort();
  const server = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net=127.0.0.1",
      new URL("llm_server.ts", import.meta.url).pathname,
      ...[port, TTFT_MS, options.itlMs, options.tokens].map(String),
    ],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForPort(port, { timeoutMs: 10_000 });
    const dir = await Deno.makeTempDir();
    const summaryPath = `${dir}/summary.json`;
    const requests = options.concurrency * options.rounds;
    const run = await runSampled(
      Deno.execPath(),
      inferperf.inferperfArgs([
        ...["-m", "bench", "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
        ...["-u", `127.0.0.1:${port}`, "--streaming", "--tokenizer", "none"],
        ...["--concurrency-range", String(options.concurrency)],
        ...["--request-count", String(requests), "--summary-json", summaryPath],
      ]),
      {
        intervalMs: SAMPLE_MS,
        cwd: inferperf.inferperfRoot(),
        counter: async () => Number(await (await fetch(`${url}/tokens`)).text()),
      },
    );
    if (run.code !== 0) throw new Error(`inferperf exited with ${run.code}: ${run.stderr.trim()}`);
    const summary = JSON.parse(await Deno.readTextFile(summaryPath));
    await Deno.remove(dir, { recursive: true });
    const llm = summary.levels[0].llm;
    const written: { itls: number[]; gaps: number[] } = await (await fetch(`${url}/stats`)).json();
    const steady = steadyState(run.samples);
    if (steady === undefined) throw new Error("The LLM stream run was too short to measure");
    const serverItl = percentile(written.itls, 99);
    const serverGap = percentile(written.gaps, 99);
    const addedItl = llm.inter_token_latency_ms.p99 - serverItl;
    // A --baseline from before summary schema 2 named every gap inter_token_gap.
    const gaps = llm.inter_chunk_latency_ms ?? llm.inter_token_gap_ms;
    const addedGap = gaps.p99 - serverGap;
    const peakMb = Math.max(...run.samples.map((s) => s.hwmKb)) / 1024;
    const label = `c=${options.concurrency}, ${options.tokens} tokens at ${options.itlMs} ms`;
    const rows: BenchRow[] = [
      {
        name: `LLM stream: CPU per token (${label})`,
        unit: "µs CPU/token",
        inferperf: steady.cpuUsPerRequest,
        note: `steady state over ${steady.seconds.toFixed(1)} s at ${
          Math.round(steady.rate)
        } tokens/s`,
      },
      {
        name: `LLM stream: peak memory (${label})`,
        unit: "MB",
        inferperf: peakMb,
        note: `the client's peak resident set (VmHWM), ${requests} answers`,
      },
      {
        name: `LLM stream: ITL p99 added (${label})`,
        unit: "ms",
        inferperf: addedItl,
        target: `< ${TARGET_ADDED_MS}`,
        met: addedItl < TARGET_ADDED_MS,
        note: `client p99 ${llm.inter_token_latency_ms.p99.toFixed(3)} ms, server's own ${
          serverItl.toFixed(3)
        } ms (per request: (last - first) / (tokens - 1))`,
      },
      {
        name: `LLM stream: gap p99 added (${label})`,
        unit: "ms",
        inferperf: addedGap,
        note: `every token-to-token gap: client p99 ${gaps.p99.toFixed(3)} ms, server's own ${
          serverGap.toFixed(3)
        } ms`,
      },
    ];
    return {
      id: "llm",
      title: "LLM streaming",
      rows,
      notes: [
        `inferperf --service-kind openai --streaming, ${requests} chat answers, against ` +
        `bench/llm_server.ts (Deno.serve, its own process) on the same two cores; the server ` +
        `notes when it wrote each token, so "added" is the client's p99 minus the server's.`,
      ],
      details: { steady, llm, serverItlP99: serverItl, serverGapP99: serverGap },
    };
  } finally {
    server.kill();
    await server.status;
  }
}
