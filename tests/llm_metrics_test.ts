/**
 * The LLM metrics against the real llama.cpp server (tests/_llama.ts) and the
 * reference server side by side: the same chat request answered alike by
 * both, and a profile whose summary holds the values genai-perf's and
 * AIPerf's formulas give for the requests of its own profile export, with the
 * server's generated-token counter equal to the client's output tokens.
 */
import assert from "node:assert/strict";
import { startServerInWorker } from "../lib/server/mod.ts";
import { parseProfileExport } from "../lib/report/export.ts";
import { llama, type LlamaServer, startLlama } from "./_llama.ts";
import { runCli } from "./_helpers.ts";
import { findGenaiPerf, perfAnalyzerShim, runGenaiPerf } from "./_genai_perf.ts";

const skip = "reason" in llama;
if ("reason" in llama) console.log(`llm_metrics_test: llama.cpp tests skipped: ${llama.reason}`);

type Json = Record<string, unknown>;

/** The SSE events of a streamed answer (its data lines, [DONE] included). */
async function events(addr: string, body: Json): Promise<string[]> {
  const response = await fetch(`http://${addr}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200);
  const text = await response.text();
  return text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6));
}

/** What a benchmark client reads of a streamed chat answer. */
function shape(stream: string[]) {
  const chunks = stream.slice(0, -1).map((e) => JSON.parse(e));
  const withOutput = chunks.filter((c) => c.choices?.[0]?.delta?.content);
  const usage = chunks.at(-1).usage;
  return {
    done: stream.at(-1),
    firstIsRole: chunks[0].choices[0].delta.role === "assistant" &&
      !chunks[0].choices[0].delta.content,
    outputs: withOutput.length,
    finish: chunks.at(-2).choices[0].finish_reason,
    usageChoices: chunks.at(-1).choices,
    completionTokens: usage.completion_tokens,
    promptTokens: usage.prompt_tokens,
  };
}

const PROMPT = "the quick brown dog and a lazy cat ran again";

Deno.test({
  name: "llama.cpp and the reference server answer a streamed chat request alike",
  ignore: skip,
  async fn() {
    const server = await startLlama();
    const reference = await startServerInWorker({
      models: [{ name: "llm", llm: { ttft_ms: 1, itl_ms: 1, output_tokens: 64 } }],
    });
    try {
      const request = {
        model: "llm",
        messages: [{ role: "user", content: PROMPT }],
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 5,
        ignore_eos: true,
      };
      const real = shape(await events(server.addr, request));
      const ours = shape(await events(reference.addr, request));
      // llama.cpp counts the prompt with its chat template: the prompt's own tokens plus 28.
      const own = (await (await fetch(`http://${server.addr}/tokenize`, {
        method: "POST",
        body: JSON.stringify({ content: PROMPT }),
      })).json()).tokens.length;
      assert.equal(own, 10, "one LLaMA token per word");
      assert.equal(real.promptTokens, own + 28);
      assert.deepEqual(ours, real);
    } finally {
      await reference.close();
      await server.stop();
    }
  },
});

/** numpy's mean and linear percentile, as both peers take them. */
function numpy(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => {
    const i = (p / 100) * (sorted.length - 1);
    const lo = Math.floor(i);
    return sorted[lo] + (sorted[Math.ceil(i)] - sorted[lo]) * (i - lo);
  };
  return { avg: sorted.reduce((a, b) => a + b, 0) / sorted.length, p50: at(50), p99: at(99) };
}

/**
 * The text a response of an OpenAI stream carried, as genai-perf extracts it; "" for none. A
 * response holds what one read brought, which may be several events (genai-perf joins their
 * texts).
 */
function textOf(output: Record<string, unknown>): string {
  return String(output.response ?? "").trim().split("\n\n").map((event) => {
    const data = event.replace(/^data:/, "").trim();
    if (data === "" || data === "[DONE]") return "";
    const chunk = JSON.parse(data);
    return chunk.choices?.[0]?.delta?.content ?? chunk.choices?.[0]?.text ?? "";
  }).join("");
}

/**
 * The peers' per-request metrics over a profile export's requests (times in
 * ns): genai-perf's LLMProfileDataParser._parse_requests
 * (genai_perf/profile_data_parser/llm_profile_data_parser.py) and AIPerf's
 * aiperf/metrics/types/ (ttft, ttst, request latency, inter-token latency,
 * per-user and prefill throughput).
 */
function peersOf(requests: ReturnType<typeof parseProfileExport>["experiments"][0]["requests"]) {
  const ms = (ns: bigint) => Number(ns) / 1e6;
  const out = { ttft: [] as number[], ttst: [] as number[], latency: [] as number[] };
  const itl: number[] = [];
  const perUser: number[] = [];
  const prefill: number[] = [];
  for (const r of requests) {
    // genai-perf's _preprocess_response: responses without text (the role chunk, the usage
    // chunk, data: [DONE]) are dropped before any metric.
    const times = r.response_timestamps.filter((_, i) => textOf(r.response_outputs[i]) !== "")
      .map((t) => ms(t - r.timestamp));
    const osl = r.inferperf_output_tokens!;
    out.ttft.push(times[0]);
    out.ttst.push(times[1] - times[0]);
    out.latency.push(times.at(-1)!);
    const gap = (times.at(-1)! - times[0]) / (osl - 1);
    itl.push(gap);
    perUser.push(1000 / gap);
    prefill.push(r.inferperf_input_tokens! / (times[0] / 1000));
  }
  return { ...out, itl, perUser, prefill };
}

function close(
  actual: number,
  expected: number,
  what: string,
  tolerance: number,
  slack = 0,
): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance * Math.abs(expected) + slack,
    `${what}: ${actual} vs ${expected}`,
  );
}

Deno.test({
  name: "llama.cpp: the summary holds the peers' formulas over the export; the server's counts",
  ignore: skip,
  async fn() {
    let server: LlamaServer | undefined;
    const dir = await Deno.makeTempDir();
    try {
      server = await startLlama();
      const before = await server.counts();
      const r = await runCli([
        ...["-m", "tiny", "--service-kind", "openai", "--endpoint", "v1/chat/completions"],
        ...["-u", server.addr, "--streaming", "--synthetic-input-tokens-mean", "128"],
        ...["--output-tokens-mean", "24", "--output-tokens-mean-deterministic"],
        ...["--concurrency-range", "4", "--request-count", "24"],
        ...["--summary-json", `${dir}/s.json`, "--profile-export-file", `${dir}/e.json`],
      ], { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr + r.stdout);
      const after = await server.counts();
      const llm = JSON.parse(await Deno.readTextFile(`${dir}/s.json`)).levels[0].llm;
      const exported = parseProfileExport(await Deno.readTextFile(`${dir}/e.json`));
      const requests = exported.experiments[0].requests;
      assert.equal(requests.length, 24);
      // ISL is the prompt's own count (the llama tokenizer is the model's vocabulary); the
      // server's, with its chat template, is beside it.
      assert.equal(llm.input_sequence_length_tokens.avg, 128);
      assert.equal(llm.server_input_sequence_length_tokens.avg, 128 + 28);
      assert.equal(llm.output_sequence_length_tokens.avg, 24);
      assert.equal(after.tokens - before.tokens, 24 * 24, "the server generated what we counted");
      // inferperf scraped the same counter at the level's start and end: the summary says so.
      const level = JSON.parse(await Deno.readTextFile(`${dir}/s.json`)).levels[0];
      assert.equal(level.llm_server.generated_tokens, 24 * 24);
      assert.equal(level.llm_server.client_output_tokens, 24 * 24);
      // llama.cpp counts the prompt tokens it computed apart from those its prefix cache held.
      assert.equal(
        level.llm_server.prompt_tokens + level.llm_server.cached_prompt_tokens,
        24 * (128 + 28),
      );
      assert.match(r.stdout, /LLM server metrics: generated 576 tokens \(client: 576\)/);
      const peers = peersOf(requests);
      const pairs: Array<[string, number[]]> = [
        ["time_to_first_token_ms", peers.ttft],
        ["time_to_second_token_ms", peers.ttst],
        ["request_latency_ms", peers.latency],
        ["inter_token_latency_ms", peers.itl],
        ["output_token_throughput_per_user_tokens_per_sec_user", peers.perUser],
        ["prefill_throughput_tokens_per_sec", peers.prefill],
      ];
      for (const [key, values] of pairs) {
        const want = numpy(values);
        // The same times: only the export's rounding to whole nanoseconds of the epoch differs.
        close(llm[key].avg, want.avg, `${key} avg`, 1e-6);
        close(llm[key].p50, want.p50, `${key} p50`, 1e-6);
        close(llm[key].p99, want.p99, `${key} p99`, 1e-6);
      }
      // The second token follows the first by one decode step, far less than the prefill.
      assert.ok(llm.time_to_second_token_ms.avg < llm.time_to_first_token_ms.avg);
    } finally {
      await server?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

// Installing genai-perf takes a minute: only when there is a server to run it against.
const genaiPerf = "reason" in llama ? llama : await findGenaiPerf();
if ("reason" in genaiPerf) console.log(`llm_metrics_test: genai-perf skipped: ${genaiPerf.reason}`);

/**
 * genai-perf, unchanged, runs inferperf as its perf_analyzer against
 * llama.cpp and computes its metrics from inferperf's profile export; the
 * summary inferperf wrote in the same run must hold the same values. Every
 * answer is " the" repeated (ignore_eos, logit_bias), so genai-perf's
 * re-tokenized output length equals the server's usage.
 */
function genaiPerfAgrees(name: string, options: { streamed: boolean }): void {
  Deno.test({
    name: `genai-perf's figures of a run equal inferperf's summary of it: ${name}`,
    ignore: "reason" in genaiPerf,
    async fn() {
      if ("reason" in genaiPerf) throw new Error(genaiPerf.reason);
      const dir = await Deno.makeTempDir({ prefix: "inferperf_llm_metrics_" });
      const server = await startLlama();
      try {
        await perfAnalyzerShim(dir, ["--summary-json", `${dir}/summary.json`]);
        const run = await runGenaiPerf(genaiPerf, [
          ...["profile", "-m", "tiny", "-u", server.addr, "--tokenizer", genaiPerf.tokenizer],
          ...["--endpoint-type", "chat", ...(options.streamed ? ["--streaming"] : [])],
          ...["--synthetic-input-tokens-mean", "64", "--synthetic-input-tokens-stddev", "0"],
          ...["--output-tokens-mean", "16", "--output-tokens-stddev", "0"],
          ...[
            "--extra-inputs",
            "ignore_eos:true",
            "--extra-inputs",
            '{"logit_bias": {"278": 100}}',
          ],
          ...["--concurrency", "2", "--request-count", "12", "--artifact-dir", `${dir}/artifacts`],
        ], { shimDir: dir, cwd: dir, timeoutMs: 120_000 });
        const tail = run.output.trim().split("\n").slice(-20).join("\n");
        assert.equal(run.code, 0, tail);
        let theirs: Json | undefined;
        for await (const entry of Deno.readDir(`${dir}/artifacts`)) {
          const path = `${dir}/artifacts/${entry.name}/profile_export_genai_perf.json`;
          theirs = JSON.parse(await Deno.readTextFile(path));
        }
        const ours = JSON.parse(await Deno.readTextFile(`${dir}/summary.json`)).levels[0].llm;
        // Every answer is 16 tokens. genai-perf asks for no usage, so both clients count the
        // streamed text, " the" x 16: 17 tokens for inferperf's LLaMA tokenizer (as llama.cpp's
        // /tokenize, the leading space is a token of its own), 16 for transformers' non-legacy
        // one. Their ITL divides the same span by their count: ours x (17 - 1) / (16 - 1).
        const ourOsl = ours.output_sequence_length_tokens as Record<string, number>;
        const theirOsl = theirs!.output_sequence_length as Record<string, number>;
        assert.equal(ourOsl.min, ourOsl.max);
        assert.equal(theirOsl.min, theirOsl.max);
        assert.equal(theirOsl.max, 16);
        assert.equal(ourOsl.max, options.streamed ? 17 : 16);
        const itl = (ourOsl.max - 1) / (theirOsl.max - 1);
        const keys: Array<[string, string, number]> = [
          ["request_latency", "request_latency_ms", 1],
          ["input_sequence_length", "input_sequence_length_tokens", 1],
        ];
        if (options.streamed) {
          keys.push(
            ["time_to_first_token", "time_to_first_token_ms", 1],
            ["time_to_second_token", "time_to_second_token_ms", 1],
            ["inter_token_latency", "inter_token_latency_ms", itl],
            [
              "output_token_throughput_per_user",
              "output_token_throughput_per_user_tokens_per_sec_user",
              1 / itl,
            ],
          );
        }
        for (const [their, our, scale] of keys) {
          const t = theirs![their] as Record<string, number>;
          for (const statistic of ["avg", "std", "min", "max", "p25", "p50", "p75", "p90", "p99"]) {
            // genai-perf reads the export's whole nanoseconds (and rounds its ITL to them): up
            // to 1 ns (1e-6 ms) apart, which is more than 1e-5 of an ITL of two tokens read
            // together (tens of microseconds).
            close(ours[our][statistic] * scale, t[statistic], `${their} ${statistic}`, 1e-5, 1e-6);
          }
        }
      } finally {
        await server.stop();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

genaiPerfAgrees("chat, concurrency 2", { streamed: false });
genaiPerfAgrees("chat, streamed, concurrency 2", { streamed: true });
