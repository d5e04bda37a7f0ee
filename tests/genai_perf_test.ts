/**
 * genai-perf itself, unchanged, with inferperf as its `perf_analyzer`,
 * against the real llama.cpp server: each case passes only if genai-perf
 * exits 0 and the requests and output tokens of its
 * profile_export_genai_perf.json equal what the server counted. genai-perf
 * counts output tokens by tokenizing the answers; with "ignore_eos" and a
 * logit_bias that makes every token " the", the text re-tokenizes to
 * exactly max_tokens (see ../shared/genai-perf/README.md).
 */
import assert from "node:assert/strict";
import { findGenaiPerf, perfAnalyzerShim, runGenaiPerf } from "./_genai_perf.ts";
import { llama, type LlamaServer, type ServerCounts, startLlama } from "./_llama.ts";

const OUTPUT_TOKENS = 8;
const INPUT_TOKENS = 16;

// Installing genai-perf takes a minute: only when there is a server to run it against.
const genaiPerf = "reason" in llama ? llama : await findGenaiPerf();
const missing = "reason" in genaiPerf ? genaiPerf.reason : "";
if (missing !== "") console.warn(`Skipping the genai-perf tests: ${missing}.`);

/** What genai-perf reported, summed over its profile exports (analyze writes one per run). */
async function reported(dir: string): Promise<ServerCounts & { files: number }> {
  const totals = { requests: 0, tokens: 0, files: 0 };
  const visit = async (path: string) => {
    for await (const entry of Deno.readDir(path)) {
      const child = `${path}/${entry.name}`;
      if (entry.isDirectory) await visit(child);
      else if (entry.name === "profile_export_genai_perf.json") {
        const json = JSON.parse(await Deno.readTextFile(child));
        const requests = json.request_count.avg as number;
        totals.requests += requests;
        totals.tokens += Math.round(json.output_sequence_length.avg * requests);
        totals.files++;
      }
    }
  };
  await visit(dir);
  return totals;
}

interface Case {
  /** genai-perf's subcommand and its options beyond the server, tokenizer and output lengths. */
  args: (dir: string) => string[] | Promise<string[]>;
  /** --warmup-request-count: sent to the server, not reported. */
  warmup?: number;
  /** Profile exports expected (analyze: one per load level). */
  files?: number;
}

/** The options of every case: the server, its tokenizer, exact output lengths. */
function common(server: LlamaServer, options: { dir: string; tokenizer: string }): string[] {
  const { dir, tokenizer } = options;
  return [
    ...["-m", "tiny", "-u", server.addr, "--tokenizer", tokenizer],
    ...["--synthetic-input-tokens-mean", `${INPUT_TOKENS}`, "--synthetic-input-tokens-stddev", "0"],
    ...["--output-tokens-mean", `${OUTPUT_TOKENS}`, "--output-tokens-stddev", "0"],
    ...["--extra-inputs", "ignore_eos:true", "--extra-inputs", '{"logit_bias": {"278": 100}}'],
    ...["--artifact-dir", `${dir}/artifacts`],
  ];
}

function genaiPerfTest(name: string, spec: Case): void {
  Deno.test({
    name: `genai-perf: ${name}`,
    ignore: missing !== "",
    async fn() {
      const gp = genaiPerf;
      if ("reason" in gp) throw new Error(gp.reason);
      const dir = await Deno.makeTempDir({ prefix: "inferperf_genai_perf_" });
      const server = await startLlama();
      try {
        await perfAnalyzerShim(dir);
        const args = [...await spec.args(dir), ...common(server, { dir, tokenizer: gp.tokenizer })];
        const run = await runGenaiPerf(gp, args, { shimDir: dir, cwd: dir });
        const tail = run.output.trim().split("\n").slice(-25).join("\n");
        assert.equal(run.code, 0, `genai-perf exited with ${run.code}:\n${tail}`);
        const seen = await reported(`${dir}/artifacts`);
        const counted = await server.counts();
        const warmup = spec.warmup ?? 0;
        assert.equal(seen.files, spec.files ?? 1, tail);
        assert.ok(seen.requests > 0, tail);
        assert.deepEqual(
          { requests: seen.requests + warmup, tokens: seen.tokens + warmup * OUTPUT_TOKENS },
          counted,
          `genai-perf reported ${seen.requests} requests, ${seen.tokens} output tokens ` +
            `(+ ${warmup} warmup requests); the server counted ${counted.requests} and ` +
            `${counted.tokens}`,
        );
        // Every answer is exactly OUTPUT_TOKENS long, so the counts agree with each other too.
        assert.equal(counted.tokens, counted.requests * OUTPUT_TOKENS);
      } finally {
        await server.stop();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

const COUNT = ["--request-count", "8"];

genaiPerfTest("profile chat, concurrency 2", {
  args: () => ["profile", "--endpoint-type", "chat", "--concurrency", "2", ...COUNT],
});

genaiPerfTest("profile chat, streamed, concurrency 2", {
  args: () => ["profile", "--endpoint-type", "chat", "--streaming", "--concurrency", "2", ...COUNT],
});

genaiPerfTest("profile completions, request rate 20", {
  args: () => ["profile", "--endpoint-type", "completions", "--request-rate", "20", ...COUNT],
});

genaiPerfTest("profile completions, streamed, request rate 20", {
  args: () => [
    ...["profile", "--endpoint-type", "completions", "--streaming", "--request-rate", "20"],
    ...COUNT,
  ],
});

genaiPerfTest("profile chat with 3 warmup requests", {
  args: () => [
    ...["profile", "--endpoint-type", "chat", "--concurrency", "1"],
    ...["--warmup-request-count", "3", ...COUNT],
  ],
  warmup: 3,
});

genaiPerfTest("profile chat, --fixed-schedule from a payload file with timestamps", {
  async args(dir) {
    const lines = [0, 30, 60, 90, 150].map((timestamp) =>
      JSON.stringify({ timestamp, input_length: INPUT_TOKENS, output_length: OUTPUT_TOKENS })
    );
    await Deno.writeTextFile(`${dir}/trace.jsonl`, lines.join("\n") + "\n");
    // genai-perf's option takes a value (a bool of any text).
    return [
      ...["profile", "--endpoint-type", "chat", "--input-file", `payload:${dir}/trace.jsonl`],
      ...["--fixed-schedule", "true"],
    ];
  },
});

genaiPerfTest("profile chat, 3 sessions of 2 turns, 2 at a time", {
  args: () => [
    ...["profile", "--endpoint-type", "chat", "--num-sessions", "3", "--session-concurrency", "2"],
    ...["--session-turns-mean", "2", "--session-turns-stddev", "0"],
    ...["--session-turn-delay-mean", "20", "--session-turn-delay-stddev", "0"],
  ],
});

genaiPerfTest("analyze chat, concurrency 1 and 2", {
  args: () => [
    ...["analyze", "--endpoint-type", "chat", "--sweep-type", "concurrency"],
    ...["--sweep-range", "1:2", "--request-count", "4"],
  ],
  files: 2,
});
