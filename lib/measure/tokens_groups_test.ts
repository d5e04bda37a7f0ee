import assert from "node:assert/strict";
import { Recorder } from "./recorder.ts";
import { groupSummaries } from "./tokens.ts";
import type { TokenTiming } from "../types/timing.ts";

/** A streamed request of `tokens` tokens, 10 ms apart, the first `ttftMs` after the send. */
function request(startMs: number, ttftMs: number, tokens: number): TokenTiming {
  const chunkTimes = Array.from({ length: tokens }, (_, i) => startMs + ttftMs + i * 10);
  const last = chunkTimes[chunkTimes.length - 1];
  return {
    start: startMs,
    sendEnd: startMs,
    recvStart: chunkTimes[0],
    end: last + 2,
    responses: tokens,
    firstResponse: chunkTimes[0],
    secondResponse: chunkTimes[1],
    lastResponse: last,
    chunkTimes,
    outputTokens: tokens,
    inputTokens: 8,
    serverInputTokens: -1,
    usage: true,
    streamed: true,
  };
}

Deno.test("per-turn and per-session summaries: each group's requests, rates over its own span", () => {
  const recorder = new Recorder();
  recorder.rotate();
  // Two sessions of two turns: A at 0 and 100 ms, B at 20 and 300 ms.
  const sent = [
    { key: ["A", "0"], timing: request(0, 30, 3) },
    { key: ["B", "0"], timing: request(20, 40, 3) },
    { key: ["A", "1"], timing: request(100, 10, 5) },
    { key: ["B", "1"], timing: request(300, 20, 5) },
  ];
  for (const { timing } of sent) recorder.record(timing);
  const window = recorder.rotate();
  const bySession = groupSummaries(window, sent.map((s) => s.key[0]));
  const byTurn = groupSummaries(window, sent.map((s) => s.key[1]));
  assert.deepEqual([...bySession.keys()], ["A", "B"]);
  assert.deepEqual([...byTurn.keys()], ["0", "1"]);
  assert.equal(byTurn.get("0")!.timeToFirstTokenUs!.avg, 35_000);
  assert.equal(byTurn.get("1")!.timeToFirstTokenUs!.avg, 15_000);
  assert.equal(byTurn.get("1")!.outputSequenceLength.avg, 5);
  const a = bySession.get("A")!;
  assert.equal(a.requestCount, 2);
  // Session A: first send at 0, last token at 100 + 10 + 40 = 150 ms: 2 requests, 8 tokens.
  assert.ok(Math.abs(a.requestThroughput - 2 / 0.15) < 1e-6, String(a.requestThroughput));
  assert.ok(Math.abs(a.outputTokenThroughput - 8 / 0.15) < 1e-6);
  // Keys that do not match the window's requests give no groups.
  assert.equal(groupSummaries(window, ["A"]).size, 0);
});
