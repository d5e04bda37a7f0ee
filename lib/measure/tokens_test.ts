import assert from "node:assert/strict";
import { Recorder } from "./recorder.ts";
import { distribution, summarizeTokens } from "./tokens.ts";
import type { TokenTiming } from "../types/timing.ts";

function tokenTiming(
  startMs: number,
  options: { ttftMs: number; totalMs: number; tokens: number; input?: number; usage?: boolean },
): TokenTiming {
  return {
    start: startMs,
    sendEnd: startMs,
    recvStart: startMs + options.ttftMs,
    end: startMs + options.totalMs,
    responses: options.tokens,
    firstResponse: startMs + options.ttftMs,
    outputTokens: options.tokens,
    inputTokens: options.input ?? -1,
    usage: options.usage ?? true,
  };
}

Deno.test("token requests: time to first token, inter-token latency, rates and counts", () => {
  const recorder = new Recorder();
  recorder.rotate();
  // 20 ms to the first token, then 4 more tokens 5 ms apart: ITL 5 ms, 5 tokens in 40 ms.
  recorder.record(tokenTiming(0, { ttftMs: 20, totalMs: 40, tokens: 5, input: 12 }));
  recorder.record(tokenTiming(10, { ttftMs: 30, totalMs: 60, tokens: 7, input: 8 }));
  const window = recorder.rotate();
  // Whole numbers keep the window exactly one second long (performance.now() values are not).
  window.startMs = 1000;
  window.endMs = 2000;
  const llm = summarizeTokens([window])!;
  assert.equal(llm.requestCount, 2);
  assert.equal(llm.requestThroughput, 2);
  assert.equal(llm.outputTokenThroughput, 12);
  assert.equal(llm.tokenSource, "usage");
  assert.equal(llm.timeToFirstTokenUs.avg, 25_000);
  assert.equal(llm.timeToFirstTokenUs.min, 20_000);
  assert.equal(llm.timeToFirstTokenUs.max, 30_000);
  assert.equal(llm.interTokenLatencyUs!.avg, 5_000);
  assert.equal(llm.endToEndLatencyUs.avg, 50_000);
  assert.deepEqual([...llm.outputTokens.percentiles.keys()], [50, 90, 95, 99]);
  assert.equal(llm.outputTokens.avg, 6);
  assert.equal(llm.inputTokens!.avg, 10);
  assert.equal(llm.outputTokensPerSecond.min, 7 / 0.06);
  assert.equal(llm.outputTokensPerSecond.max, 5 / 0.04);
  assert.equal(llm.corrected, undefined);
});

Deno.test("open-loop token requests are also measured from the intended send time", () => {
  const recorder = new Recorder();
  recorder.rotate();
  // Sent 10 ms late: every figure from the intended time is 10 ms longer.
  recorder.record(tokenTiming(110, { ttftMs: 20, totalMs: 40, tokens: 1, usage: false }), 100);
  recorder.record(tokenTiming(200, { ttftMs: 20, totalMs: 40, tokens: 2 }), 200);
  const llm = summarizeTokens([recorder.rotate()], { percentiles: [75] })!;
  assert.equal(llm.tokenSource, "mixed");
  assert.equal(llm.corrected!.timeToFirstTokenUs.max, 30_000);
  assert.equal(llm.corrected!.endToEndLatencyUs.max, 50_000);
  assert.equal(llm.corrected!.outputTokensPerSecond.min, 1 / 0.05);
  assert.ok(llm.timeToFirstTokenUs.percentiles.has(75));
  // One token has no gap; without prompt counts there is no input distribution.
  assert.equal(llm.interTokenLatencyUs!.avg, 20_000);
  assert.equal(llm.inputTokens, undefined);
});

Deno.test("windows without token requests have no LLM summary; NaN values are skipped", () => {
  const recorder = new Recorder();
  recorder.rotate();
  recorder.record({ start: 0, sendEnd: 1, recvStart: 2, end: 3, responses: 1 });
  assert.equal(summarizeTokens([recorder.rotate()]), undefined);
  assert.equal(distribution([[NaN]], [50]), undefined);
  assert.deepEqual(distribution([[3, NaN], [1]], [50])!.percentiles, new Map([[50, 3]]));
});
