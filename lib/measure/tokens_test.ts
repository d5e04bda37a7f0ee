import assert from "node:assert/strict";
import type { Tokenizer } from "../input/tokenizer.ts";
import { Recorder } from "./recorder.ts";
import {
  describeSources,
  distribution,
  LLM_PERCENTILES,
  parseGoodput,
  summarizeTokens,
} from "./tokens.ts";
import type { TokenTiming } from "../types/timing.ts";
import type { Distribution } from "../types/results.ts";

/** A streamed request: the first token after `ttftMs`, then one every `gapMs`. */
function tokenTiming(
  startMs: number,
  options: { ttftMs: number; gapMs: number; tokens: number; input?: number; usage?: boolean },
): TokenTiming {
  const chunkTimes = Array.from(
    { length: options.tokens },
    (_, i) => startMs + options.ttftMs + i * options.gapMs,
  );
  return streamed(startMs, chunkTimes, {
    output: options.tokens,
    input: options.input ?? -1,
    usage: options.usage ?? true,
  });
}

/**
 * A streamed request sent at `startMs` whose chunks with output arrived at
 * `chunkTimes`, as the OpenAI client fills its timing; the stream ends 2 ms
 * after the last chunk (the usage chunk and [DONE]).
 */
function streamed(
  startMs: number,
  chunkTimes: number[],
  counts: { output: number; input: number; server?: number; usage: boolean },
): TokenTiming {
  const last = chunkTimes[chunkTimes.length - 1];
  return {
    start: startMs,
    sendEnd: startMs,
    recvStart: chunkTimes[0],
    end: last + 2,
    responses: chunkTimes.length,
    firstResponse: chunkTimes[0],
    secondResponse: chunkTimes[1],
    lastResponse: last,
    chunkTimes,
    outputTokens: counts.output,
    inputTokens: counts.input,
    serverInputTokens: counts.server ?? -1,
    usage: counts.usage,
    outputText: counts.usage ? undefined : "x ".repeat(counts.output),
    streamed: true,
  };
}

/** One window of exactly one second (performance.now() values are not whole). */
function oneSecond(recorder: Recorder) {
  const window = recorder.rotate();
  window.startMs = 1000;
  window.endMs = 2000;
  return window;
}

/**
 * A fixed set of requests as genai-perf's profile export holds them: send
 * time, the times of the responses with output (ms), output tokens (the
 * server's usage), the prompt's own tokens and the server's prompt tokens
 * (chat template included).
 */
const FIXED = [
  { send: 0, responses: [20, 25, 31, 38, 46], output: 5, input: 12, server: 40 },
  { send: 10, responses: [40, 45, 52], output: 7, input: 8, server: 36 },
  { send: 30, responses: [90], output: 1, input: 20, server: 48 },
  { send: 35, responses: [60, 61, 70, 85], output: 4, input: 16, server: 44 },
];

/** numpy's statistics (mean, population std, linear percentiles), which both peers report. */
function numpyStats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const avg = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  const pct = (p: number) => {
    const at = (p / 100) * (sorted.length - 1);
    const lo = Math.floor(at);
    const hi = Math.ceil(at);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
  };
  return {
    avg,
    std: Math.sqrt(sorted.reduce((a, v) => a + (v - avg) ** 2, 0) / sorted.length),
    min: sorted[0],
    max: sorted[sorted.length - 1],
    p: [1, 5, 10, 25, 50, 75, 90, 95, 99].map(pct),
  };
}

/**
 * The peers' per-request formulas over FIXED, in ms and tokens: genai-perf's
 * LLMProfileDataParser._parse_requests
 * (genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py) and
 * AIPerf's metric classes (aiperf/metrics/types/: ttft_metric.py,
 * ttst_metric.py, request_latency_metric.py, inter_token_latency_metric.py,
 * output_token_throughput_metrics.py, prefill_throughput.py,
 * inter_chunk_latency_metric.py, request_throughput_metric.py with
 * benchmark_duration_metric.py).
 */
function peers() {
  const ttft: number[] = [];
  const ttst: number[] = [];
  const latency: number[] = [];
  const itl: number[] = [];
  const perUser: number[] = [];
  const prefill: number[] = [];
  const icl: number[] = [];
  for (const r of FIXED) {
    const req = r.responses.at(-1)! - r.send;
    const first = r.responses[0] - r.send;
    latency.push(req);
    ttft.push(first);
    if (r.responses.length > 1) ttst.push(r.responses[1] - r.responses[0]);
    if (r.responses.length > 1 && r.output > 1) {
      const gap = (req - first) / (r.output - 1);
      itl.push(gap);
      perUser.push(1 / (gap / 1000));
    }
    prefill.push(r.input / (first / 1000));
    for (let i = 1; i < r.responses.length; i++) icl.push(r.responses[i] - r.responses[i - 1]);
  }
  const durationS = (Math.max(...FIXED.map((r) => r.responses.at(-1)!)) -
    Math.min(...FIXED.map((r) => r.send))) / 1000;
  const osl = FIXED.map((r) => r.output);
  return {
    ttft,
    ttst,
    latency,
    itl,
    perUser,
    prefill,
    icl,
    osl,
    isl: FIXED.map((r) => r.input),
    requestThroughput: FIXED.length / durationS,
    outputTokenThroughput: osl.reduce((a, b) => a + b, 0) / durationS,
    durationS,
  };
}

/** FIXED recorded in one window that runs from the first send to the last answer. */
function fixedSummary(options: Parameters<typeof summarizeTokens>[1] = {}) {
  const recorder = new Recorder();
  recorder.rotate();
  for (const r of FIXED) {
    recorder.record(streamed(r.send, r.responses, { ...r, usage: true }));
  }
  const window = recorder.rotate();
  window.startMs = 0;
  window.endMs = peers().durationS * 1000;
  return summarizeTokens([window], options)!;
}

function assertClose(actual: number, expected: number, what: string) {
  assert.ok(
    Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)),
    `${what}: ${actual} != ${expected}`,
  );
}

/** `d` (scaled by `by`) is numpy's statistics of the peers' values. */
function assertStats(d: Distribution | undefined, values: number[], what: string, by = 1) {
  assert.ok(d !== undefined, `${what} is missing`);
  const want = numpyStats(values);
  assertClose(d.avg * by, want.avg, `${what} avg`);
  assertClose(d.std * by, want.std, `${what} std`);
  assertClose(d.min * by, want.min, `${what} min`);
  assertClose(d.max * by, want.max, `${what} max`);
  LLM_PERCENTILES.forEach((p, i) =>
    assertClose(d.percentiles.get(p)! * by, want.p[i], `${what} p${p}`)
  );
}

Deno.test("every metric named as genai-perf's and AIPerf's gives their formula's value", () => {
  const llm = fixedSummary();
  const want = peers();
  assertStats(llm.timeToFirstTokenUs, want.ttft, "time to first token", 1e-3);
  // From the first token to the second (5, 5, 1 ms), not from the send (25, 35, 26 ms).
  assertStats(llm.timeToSecondTokenUs, want.ttst, "time to second token", 1e-3);
  // To the last output, not to the end of the stream ([DONE] came 2 ms later).
  assertStats(llm.requestLatencyUs, want.latency, "request latency", 1e-3);
  assertStats(llm.interTokenLatencyUs, want.itl, "inter-token latency", 1e-3);
  // 1 / ITL of each request (200, 333.3, 333.3 tokens/s), not tokens / request latency.
  assertStats(llm.outputTokenThroughputPerUser, want.perUser, "output token throughput per user");
  assertStats(llm.outputSequenceLength, want.osl, "output sequence length");
  assertStats(llm.inputSequenceLength, want.isl, "input sequence length");
  assertStats(llm.prefillThroughput, want.prefill, "prefill throughput");
  assertStats(llm.interChunkLatencyUs, want.icl, "inter-chunk latency", 1e-3);
  assertClose(llm.requestThroughput, want.requestThroughput, "request throughput");
  assertClose(llm.outputTokenThroughput, want.outputTokenThroughput, "output token throughput");
  // inferperf's own: the server's count of the prompt, template included.
  assertStats(llm.serverInputSequenceLength, FIXED.map((r) => r.server), "server input length");
  assert.deepEqual(llm.inputTokenSources, { usage: 0, tokenizer: 4, none: 0 });
});

Deno.test("goodput is the peers' good requests over the benchmark duration", () => {
  const objectives = parseGoodput([
    "time_to_first_token:25 time_to_second_token:5 inter_token_latency:9",
  ]);
  const llm = fixedSummary({ goodput: objectives });
  // AIPerf's GoodRequestCountMetric (aiperf/metrics/types/good_request_count_metric.py): a
  // request is good when it has every figure and each is within its bound (<= for times);
  // genai-perf's LLMGoodputCalculator (genai_perf/goodput_calculator/llm_goodput_calculator.py)
  // counts the same over the requests that have the figures.
  const good = FIXED.filter((r) => {
    const ttft = r.responses[0] - r.send;
    if (r.responses.length < 2 || r.output < 2) return false;
    const ttst = r.responses[1] - r.responses[0];
    const itl = (r.responses.at(-1)! - r.send - ttft) / (r.output - 1);
    return ttft <= 25 && ttst <= 5 && itl <= 9;
  }).length;
  // The first and the last: the second's TTFT is 30 ms, the third has one token.
  assert.equal(good, 2);
  assert.equal(llm.goodput!.goodCount, good);
  assertClose(llm.goodput!.requestGoodput, good / peers().durationS, "request goodput");
});

Deno.test("token requests: genai-perf's metrics per request and per level", () => {
  const recorder = new Recorder();
  recorder.rotate();
  // 20 ms to the first token, then 4 more 5 ms apart: ITL 5 ms, 5 tokens in 40 ms.
  recorder.record(tokenTiming(0, { ttftMs: 20, gapMs: 5, tokens: 5, input: 12 }));
  // 30 ms, then 6 more 5 ms apart: 7 tokens in 60 ms.
  recorder.record(tokenTiming(10, { ttftMs: 30, gapMs: 5, tokens: 7, input: 8 }));
  const llm = summarizeTokens([oneSecond(recorder)])!;
  assert.equal(llm.requestCount, 2);
  assert.equal(llm.requestThroughput, 2);
  assert.equal(llm.outputTokenThroughput, 12);
  assert.deepEqual(llm.outputTokenSources, { usage: 2, tokenizer: 0, none: 0 });
  assert.equal(llm.timeToFirstTokenUs!.avg, 25_000);
  assert.equal(llm.timeToFirstTokenUs!.min, 20_000);
  assert.equal(llm.timeToFirstTokenUs!.max, 30_000);
  assert.equal(llm.timeToSecondTokenUs!.avg, 5_000);
  assert.equal(llm.interTokenLatencyUs!.avg, 5_000);
  assert.equal(llm.interChunkLatencyUs!.avg, 5_000);
  assert.equal(llm.interChunkLatencyUs!.std, 0);
  assert.deepEqual(llm.gapByPositionUs, Array(6).fill(5_000));
  assert.equal(llm.requestLatencyUs.avg, 50_000);
  assert.deepEqual(
    [...llm.outputSequenceLength.percentiles.keys()],
    [1, 5, 10, 25, 50, 75, 90, 95, 99],
  );
  assert.equal(llm.outputSequenceLength.avg, 6);
  assert.equal(llm.inputSequenceLength!.avg, 10);
  assert.equal(llm.outputTokenThroughputPerUser!.avg, 200);
  assert.deepEqual(llm.ttftByInput, [[12, 20_000], [8, 30_000]]);
  assert.equal(llm.reasoningTokenCount, undefined);
  assert.equal(llm.serverInputSequenceLength, undefined);
  assert.equal(llm.corrected, undefined);
  assert.equal(llm.goodput, undefined);
});

Deno.test("goodput counts the requests within every objective", () => {
  const recorder = new Recorder();
  recorder.rotate();
  recorder.record(tokenTiming(0, { ttftMs: 20, gapMs: 5, tokens: 5 }));
  recorder.record(tokenTiming(0, { ttftMs: 120, gapMs: 5, tokens: 5 })); // TTFT too long
  recorder.record(tokenTiming(0, { ttftMs: 20, gapMs: 12, tokens: 5 })); // ITL too long
  recorder.record(tokenTiming(0, { ttftMs: 20, gapMs: 5, tokens: 1 })); // no gap: met
  const goodput = parseGoodput(["time_to_first_token:100 inter_token_latency:10"]);
  const window = oneSecond(recorder);
  const llm = summarizeTokens([window], { goodput })!;
  // The one-token answer has no inter-token latency: not good, as in both peers.
  assert.equal(llm.goodput!.goodCount, 1);
  assert.equal(llm.goodput!.requestGoodput, 1);
  // A lower bound on 1 / ITL: 200/s twice meets it; 83/s and no ITL do not.
  const perUser = summarizeTokens([window], {
    goodput: parseGoodput(["output_token_throughput_per_user:100"]),
  })!;
  assert.equal(perUser.goodput!.goodCount, 2);
});

Deno.test("--goodput refuses unknown metrics and bad values in one line", () => {
  assert.deepEqual(parseGoodput(["request_latency:2000", "output_token_throughput_per_user=30"]), [
    { metric: "request_latency", value: 2000 },
    { metric: "output_token_throughput_per_user", value: 30 },
  ]);
  assert.throws(() => parseGoodput(["ttft:100"]), /Invalid value "ttft:100" for --goodput/);
  assert.throws(() => parseGoodput(["request_latency:-1"]), /must be a number > 0/);
});

Deno.test("answers without usage are counted by the tokenizer when the level ends", () => {
  const words: Tokenizer = {
    name: "words",
    count: (text) => text.split(" ").filter((w) => w !== "").length * 2,
    encode: () => [],
    decode: () => "",
  };
  const recorder = new Recorder();
  recorder.rotate();
  recorder.record(tokenTiming(0, { ttftMs: 20, gapMs: 5, tokens: 3, usage: false }));
  recorder.record(tokenTiming(0, { ttftMs: 20, gapMs: 5, tokens: 3, input: 4 }));
  const window = oneSecond(recorder);
  const counted = summarizeTokens([window], { tokenizer: words })!;
  assert.equal(counted.outputSequenceLength.max, 6);
  assert.deepEqual(counted.outputTokenSources, { usage: 1, tokenizer: 1, none: 0 });
  assert.equal(counted.tokenizer, "words");
  // (30 - 20) ms over 6 - 1 gaps between tokens.
  assert.equal(counted.interTokenLatencyUs!.min, 2_000);
  const chunks = summarizeTokens([window])!;
  assert.deepEqual(chunks.outputTokenSources, { usage: 1, tokenizer: 0, none: 1 });
  assert.equal(
    describeSources(chunks.outputTokenSources, "chunks"),
    "mixed (usage 1, chunks 1)",
  );
  assert.equal(
    describeSources(counted.inputTokenSources, "unknown"),
    "mixed (tokenizer 1, unknown 1)",
  );
});

Deno.test("a model's own tokenizer counts answers with usage too, each text once a level", () => {
  let calls = 0;
  const own: Tokenizer = {
    name: "own",
    count: (text) => (calls++, text.split(" ").length),
    encode: () => [],
    decode: () => "",
    fromModel: true,
  };
  const recorder = new Recorder();
  recorder.rotate();
  const windows = [0, 1].map((w) => {
    for (let i = 0; i < 3; i++) {
      // usage says 3 tokens; the text "a b c d" counts 4.
      const t = tokenTiming(w * 1000, { ttftMs: 20, gapMs: 5, tokens: 3, input: 8 });
      const timing: TokenTiming = { ...t, outputText: `a b c d ${w}${i}`, serverInputTokens: 10 };
      recorder.record(timing);
    }
    return oneSecond(recorder);
  });
  const level = summarizeTokens(windows, { tokenizer: own })!;
  assert.equal(level.outputSequenceLength.max, 3, "the usage's count is the OSL");
  assert.deepEqual(level.usageCheck, {
    prompt: { compared: 6, mismatched: 6, avgDiff: 2 },
    completion: { compared: 6, mismatched: 6, avgDiff: -2 },
    discrepancyCount: 6,
    thresholdPct: 10,
  });
  for (const w of windows) summarizeTokens([w], { tokenizer: own });
  assert.equal(calls, 6, "six texts, counted once though summarized twice");
  // A built-in tokenizer is another vocabulary: the answers with usage are not compared.
  const builtIn = summarizeTokens(windows, { tokenizer: { ...own, fromModel: false } })!;
  assert.equal(builtIn.usageCheck!.completion, undefined);
});

Deno.test("open-loop token requests are also measured from the intended send time", () => {
  const recorder = new Recorder();
  recorder.rotate();
  // Sent 10 ms late: every latency from the intended time is 10 ms longer.
  recorder.record(tokenTiming(110, { ttftMs: 20, gapMs: 20, tokens: 2 }), 100);
  recorder.record(tokenTiming(200, { ttftMs: 20, gapMs: 20, tokens: 2 }), 200);
  const llm = summarizeTokens([recorder.rotate()], { percentiles: [97] })!;
  assert.equal(llm.corrected!.timeToFirstTokenUs!.max, 30_000);
  assert.equal(llm.corrected!.requestLatencyUs.max, 50_000);
  assert.ok(llm.timeToFirstTokenUs!.percentiles.has(97));
  assert.equal(llm.inputSequenceLength, undefined);
});

Deno.test("answers that were not streamed have no first-token figures", () => {
  const recorder = new Recorder();
  recorder.rotate();
  const timing = tokenTiming(0, { ttftMs: 40, gapMs: 0, tokens: 1 });
  timing.streamed = false;
  timing.outputTokens = 12;
  recorder.record(timing);
  const llm = summarizeTokens([recorder.rotate()])!;
  assert.equal(llm.timeToFirstTokenUs, undefined);
  assert.equal(llm.interTokenLatencyUs, undefined);
  // The whole answer's end, 2 ms after the body began.
  assert.equal(llm.requestLatencyUs.avg, 42_000);
  assert.equal(llm.outputSequenceLength.avg, 12);
});

Deno.test("windows without token requests have no LLM summary; NaN values are skipped", () => {
  const recorder = new Recorder();
  recorder.rotate();
  recorder.record({ start: 0, sendEnd: 1, recvStart: 2, end: 3, responses: 1 });
  assert.equal(summarizeTokens([recorder.rotate()]), undefined);
  assert.equal(distribution([[NaN]], [50]), undefined);
  // numpy's linear percentile: halfway between 1 and 3.
  assert.deepEqual(distribution([[3, NaN], [1]], [50])!.percentiles, new Map([[50, 2]]));
});

Deno.test("reasoning tokens: from usage, else the tokenizer, else the chunks; OSL holds them", () => {
  const words: Tokenizer = {
    name: "words",
    count: (text) => text.split(" ").filter((w) => w !== "").length,
    encode: () => [],
    decode: () => "",
  };
  const recorder = new Recorder();
  recorder.rotate();
  const thinking = (reasoning: Partial<TokenTiming>) => {
    const t = tokenTiming(0, { ttftMs: 10, gapMs: 1, tokens: 6 });
    recorder.record({ ...t, reasoningChunks: 3, reasoningUsage: -1, ...reasoning });
  };
  thinking({ reasoningUsage: 4 }); // usage's completion_tokens_details
  thinking({ reasoningText: "a b c d e" }); // the tokenizer counts 5
  thinking({}); // 3 chunks
  recorder.record(tokenTiming(0, { ttftMs: 10, gapMs: 1, tokens: 6 })); // no reasoning
  const window = oneSecond(recorder);
  const counted = summarizeTokens([window], { tokenizer: words })!;
  // AIPerf's reasoning_token_count (aiperf/metrics/types/reasoning_token_count.py): per answer
  // that reasoned; its OSL (output_sequence_length_metric.py) is output plus reasoning tokens,
  // which the usage's completion_tokens already are.
  assert.equal(counted.reasoningTokenCount!.avg, 4);
  assert.equal(counted.reasoningTokenCount!.min, 3);
  assert.equal(counted.reasoningTokenCount!.max, 5);
  assert.equal(counted.outputSequenceLength.avg, 6);
  assert.equal(summarizeTokens([window])!.reasoningTokenCount!.max, 4, "no tokenizer: chunks");
});

Deno.test("time slices: every metric again over the requests sent in each slice", () => {
  const recorder = new Recorder();
  recorder.rotate();
  for (const r of FIXED) recorder.record(streamed(r.send, r.responses, { ...r, usage: true }));
  const window = recorder.rotate();
  // The window from performance.now() 0 to 90 ms: sends at 0 and 10 ms, then 30 and 35 ms.
  window.startMs = 0;
  window.endMs = 90;
  window.startWallNs = BigInt(Math.round(performance.timeOrigin * 1e6));
  const llm = summarizeTokens([window], { sliceMs: 20 })!;
  assert.deepEqual(llm.slices!.map((s) => [s.startS, s.endS, s.llm.requestCount]), [
    [0, 0.02, 2],
    [0.02, 0.04, 2],
  ]);
  const [first, second] = llm.slices!.map((s) => s.llm);
  assert.equal(first.timeToFirstTokenUs!.avg, (20 + 30) / 2 * 1000);
  assert.equal(second.timeToFirstTokenUs!.avg, (60 + 25) / 2 * 1000);
  assert.equal(first.requestThroughput, 2 / 0.02);
  assertClose(first.outputTokenThroughput, (5 + 7) / 0.02, "slice output tokens/s");
  // Inter-chunk latency of the slice's own requests only: 5, 6, 7, 8 and 5, 7 ms.
  assert.equal(first.interChunkLatencyUs!.avg, 38 / 6 * 1000);
  assert.deepEqual(first.gapByPositionUs, [5_000, 6_500, 7_000, 8_000]);
  assert.equal(second.interChunkLatencyUs!.max, 15_000);
  assert.equal(first.slices, undefined);
  assert.equal(summarizeTokens([window])!.slices, undefined);
});

Deno.test("gaps by position: genai-perf's per-token gaps when each chunk is one token", () => {
  // genai-perf's chunked_inter_token_latencies (llm_profile_data_parser.py): each gap divided by
  // the later response's tokens (1 here), averaged by position for its token-position chart.
  const oneTokenChunks = FIXED.filter((r) => r.responses.length === r.output);
  const recorder = new Recorder();
  recorder.rotate();
  for (const r of oneTokenChunks) {
    recorder.record(streamed(r.send, r.responses, { ...r, usage: true }));
  }
  const llm = summarizeTokens([oneSecond(recorder)])!;
  const sums: number[] = [];
  const counts: number[] = [];
  for (const r of oneTokenChunks) {
    for (let i = 1; i < r.responses.length; i++) {
      sums[i - 1] = (sums[i - 1] ?? 0) + (r.responses[i] - r.responses[i - 1]) / 1;
      counts[i - 1] = (counts[i - 1] ?? 0) + 1;
    }
  }
  assert.deepEqual(llm.gapByPositionUs, sums.map((sum, i) => sum / counts[i] * 1000));
});
