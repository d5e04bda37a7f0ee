import assert from "node:assert/strict";
import type { Tokenizer } from "../input/tokenizer.ts";
import { Recorder } from "./recorder.ts";
import { describeSources, distribution, parseGoodput, summarizeTokens } from "./tokens.ts";
import type { TokenTiming } from "../types/timing.ts";

/** A streamed request: the first token after `ttftMs`, then one every `gapMs`. */
function tokenTiming(
  startMs: number,
  options: { ttftMs: number; gapMs: number; tokens: number; input?: number; usage?: boolean },
): TokenTiming {
  const chunkTimes = Array.from(
    { length: options.tokens },
    (_, i) => startMs + options.ttftMs + i * options.gapMs,
  );
  const end = chunkTimes[chunkTimes.length - 1];
  return {
    start: startMs,
    sendEnd: startMs,
    recvStart: startMs + options.ttftMs,
    end,
    responses: options.tokens,
    firstResponse: chunkTimes[0],
    chunkTimes,
    outputTokens: options.tokens,
    inputTokens: options.input ?? -1,
    usage: options.usage ?? true,
    outputText: options.usage === false ? "x ".repeat(options.tokens) : undefined,
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
  assert.equal(llm.timeToSecondTokenUs!.avg, 30_000);
  assert.equal(llm.interTokenLatencyUs!.avg, 5_000);
  assert.equal(llm.tokenGapUs!.avg, 5_000);
  assert.equal(llm.tokenGapUs!.std, 0);
  assert.deepEqual(llm.gapByPositionUs, Array(6).fill(5_000));
  assert.equal(llm.requestLatencyUs.avg, 50_000);
  assert.deepEqual(
    [...llm.outputSequenceLength.percentiles.keys()],
    [1, 5, 10, 25, 50, 75, 90, 95, 99],
  );
  assert.equal(llm.outputSequenceLength.avg, 6);
  assert.equal(llm.inputSequenceLength!.avg, 10);
  assert.equal(llm.outputTokenThroughputPerUser!.min, 7 / 0.06);
  assert.equal(llm.outputTokenThroughputPerUser!.max, 5 / 0.04);
  assert.deepEqual(llm.ttftByInput, [[12, 20_000], [8, 30_000]]);
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
  assert.equal(llm.goodput!.goodCount, 2);
  assert.equal(llm.goodput!.requestGoodput, 2);
  // A lower bound: 5 tokens in 40 ms = 125/s meets it; 5 in 140 or 68 ms, 1 in 20 ms do not.
  const perUser = summarizeTokens([window], {
    goodput: parseGoodput(["output_token_throughput_per_user:100"]),
  })!;
  assert.equal(perUser.goodput!.goodCount, 1);
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
  assert.equal(describeSources(counted.inputTokenSources, "unknown"), "mixed (usage 1, unknown 1)");
});

Deno.test("open-loop token requests are also measured from the intended send time", () => {
  const recorder = new Recorder();
  recorder.rotate();
  // Sent 10 ms late: every latency from the intended time is 10 ms longer.
  recorder.record(tokenTiming(110, { ttftMs: 20, gapMs: 20, tokens: 2 }), 100);
  recorder.record(tokenTiming(200, { ttftMs: 20, gapMs: 20, tokens: 2 }), 200);
  const llm = summarizeTokens([recorder.rotate()], { percentiles: [97] })!;
  assert.equal(llm.corrected!.timeToFirstTokenUs!.max, 30_000);
  assert.equal(llm.corrected!.timeToSecondTokenUs!.max, 50_000);
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
  assert.equal(llm.requestLatencyUs.avg, 40_000);
  assert.equal(llm.outputSequenceLength.avg, 12);
});

Deno.test("windows without token requests have no LLM summary; NaN values are skipped", () => {
  const recorder = new Recorder();
  recorder.rotate();
  recorder.record({ start: 0, sendEnd: 1, recvStart: 2, end: 3, responses: 1 });
  assert.equal(summarizeTokens([recorder.rotate()]), undefined);
  assert.equal(distribution([[NaN]], [50]), undefined);
  assert.deepEqual(distribution([[3, NaN], [1]], [50])!.percentiles, new Map([[50, 3]]));
});
