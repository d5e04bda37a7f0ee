/**
 * Per-session metrics as genai-perf computes them: genai-perf itself, with
 * inferperf as its perf_analyzer, runs multi-turn sessions against llama.cpp
 * and reports each session's statistics ("sessions" in its JSON) from
 * inferperf's export; inferperf's own summary of the same run
 * (llm.sessions) must hold the same values.
 */
import assert from "node:assert/strict";
import { findGenaiPerf, perfAnalyzerShim, runGenaiPerf } from "./_genai_perf.ts";
import { llama, startLlama } from "./_llama.ts";

const genaiPerf = "reason" in llama ? llama : await findGenaiPerf();
const missing = "reason" in genaiPerf ? genaiPerf.reason : "";
if (missing !== "") console.warn(`Skipping the genai-perf sessions test: ${missing}.`);

type Stats = Record<string, { avg: number }>;

async function find(dir: string, name: string): Promise<string | undefined> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isFile && entry.name === name) return path;
    if (entry.isDirectory) {
      const found = await find(path, name);
      if (found) return found;
    }
  }
  return undefined;
}

Deno.test({
  name: "genai-perf's per-session statistics equal inferperf's llm.sessions",
  ignore: missing !== "",
  async fn() {
    const gp = genaiPerf;
    if ("reason" in gp) throw new Error(gp.reason);
    const dir = await Deno.makeTempDir({ prefix: "inferperf_genai_perf_sessions_" });
    const server = await startLlama();
    try {
      await perfAnalyzerShim(dir, ["--summary-json", `${dir}/summary.json`]);
      const run = await runGenaiPerf(gp, [
        ...[
          "profile",
          "--endpoint-type",
          "chat",
          "--num-sessions",
          "3",
          "--session-concurrency",
          "2",
        ],
        ...["--session-turns-mean", "3", "--session-turns-stddev", "0"],
        ...["--session-turn-delay-mean", "10", "--session-turn-delay-stddev", "0", "--streaming"],
        ...["-m", "tiny", "-u", server.addr, "--tokenizer", gp.tokenizer],
        ...["--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "8"],
        ...["--extra-inputs", "ignore_eos:true", "--artifact-dir", `${dir}/artifacts`],
      ], { shimDir: dir, cwd: dir });
      const tail = run.output.trim().split("\n").slice(-25).join("\n");
      assert.equal(run.code, 0, `genai-perf exited with ${run.code}:\n${tail}`);
      const theirs = JSON.parse(
        await Deno.readTextFile((await find(dir, "profile_export_genai_perf.json"))!),
      ).sessions as Record<string, Stats>;
      const ours = JSON.parse(await Deno.readTextFile(`${dir}/summary.json`)).levels[0].llm
        .sessions as Record<string, Record<string, { avg: number } | number>>;
      assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
      const close = (a: number, b: number, what: string) =>
        assert.ok(
          Math.abs(a - b) <= 1e-4 * Math.abs(b),
          `${what}: inferperf ${a}, genai-perf ${b}`,
        );
      for (const [id, stats] of Object.entries(theirs)) {
        const mine = ours[id];
        const avg = (key: string) => (mine[key] as { avg: number }).avg;
        close(avg("request_latency_ms"), stats.request_latency.avg, `${id} request latency`);
        close(avg("time_to_first_token_ms"), stats.time_to_first_token.avg, `${id} TTFT`);
        close(avg("time_to_second_token_ms"), stats.time_to_second_token.avg, `${id} TTST`);
        // Each session's rate over its span, first send to last answer, as genai-perf's.
        close(
          mine.request_throughput_per_sec as number,
          stats.request_throughput.avg,
          `${id} request throughput`,
        );
        assert.equal(mine.request_count, 3);
      }
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
