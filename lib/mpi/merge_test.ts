import assert from "node:assert/strict";
import { LatencyHistogram } from "../measure/histogram.ts";
import { emptyWindow } from "../measure/recorder.ts";
import { percentile } from "../measure/stats.ts";
import { mergeWindows } from "./merge.ts";
import { decodeWindow, encodeWindow } from "./window_codec.ts";
import { packFrames, unpackFrames } from "./communicator.ts";

function window(latenciesUs: number[], fields: { lagsUs?: number[]; durationMs?: number } = {}) {
  return emptyWindow(1000, {
    endMs: 1000 + (fields.durationMs ?? 500),
    latenciesUs: Float64Array.from(latenciesUs),
    sendLagsUs: Float64Array.from(fields.lagsUs ?? []),
    sendCount: fields.lagsUs?.length ?? 0,
    sendUsSum: latenciesUs.length * 10,
    responseCount: latenciesUs.length,
    errorCount: 1,
    errors: new Map([["boom", 1]]),
    histogram: LatencyHistogram.fromMicroseconds(latenciesUs),
  });
}

Deno.test("merged windows pool the ranks' samples: percentiles as from all raw latencies", () => {
  const ranks = [[100, 300, 900], [200, 250], [5000, 120, 130, 140]];
  const merged = mergeWindows(ranks.map((l, i) => window(l, { durationMs: 500 + i })));
  const all = Float64Array.from(ranks.flat()).sort();
  const pooled = Float64Array.from(merged.latenciesUs).sort();
  for (const p of [50, 90, 99]) assert.equal(percentile(pooled, p), percentile(all, p));
  assert.equal(merged.histogram!.count, all.length);
  assert.deepEqual(
    merged.histogram!.percentilesNs([50, 99]),
    LatencyHistogram.fromMicroseconds(all).percentilesNs([50, 99]),
  );
  assert.equal(merged.errorCount, 3);
  assert.deepEqual([...merged.errors], [["boom", 3]]);
  assert.equal(merged.sendUsSum, all.length * 10);
  assert.equal(merged.endMs - merged.startMs, 502, "the longest rank's window");
  assert.deepEqual(merged.shards.map((s) => s.requestCount), [3, 2, 4]);
});

Deno.test("each rank's send lag stays visible in a merged window", () => {
  const merged = mergeWindows([window([1], { lagsUs: [10, 20] }), window([1], { lagsUs: [5000] })]);
  assert.equal(merged.sendCount, 3);
  assert.deepEqual(merged.shards.map((s) => s.sendLagMaxUs), [20, 5000]);
});

Deno.test("a window survives encoding: samples exact, times as a duration", () => {
  const original = { ...window([1.5, 2.25, 3]), serverStats: [] };
  const decoded = decodeWindow(encodeWindow(original), 7000);
  assert.deepEqual([...decoded.latenciesUs], [1.5, 2.25, 3]);
  assert.equal(decoded.endMs, 7000);
  assert.equal(decoded.startMs, 6500);
  assert.equal(decoded.startWallNs, original.startWallNs);
  assert.deepEqual([...decoded.errors], [["boom", 1]]);
  assert.equal(decoded.histogram!.count, 3);
  assert.deepEqual(decoded.serverStats, []);
});

Deno.test("frames pack and unpack, empty ones included", () => {
  const frames = [new Uint8Array([1, 2]), new Uint8Array(0), new Uint8Array([3])];
  assert.deepEqual(unpackFrames(packFrames(frames)).map((f) => [...f]), [[1, 2], [], [3]]);
});

Deno.test("LLM token figures survive encoding and pool across ranks", () => {
  const tokens = (ttft: number, text: string | undefined) => ({
    ttftUs: [ttft],
    ttstUs: [NaN],
    latencyUs: [ttft * 2],
    streamUs: [NaN],
    chunks: [1],
    usageTokens: [-1],
    texts: [text],
    inputTokens: [-1],
    serverInputTokens: [-1],
    reasoningUsage: [-1],
    cachedTokens: [-1],
    requestedTokens: [-1],
    reasoningChunks: [0],
    reasoningTexts: [undefined],
    sendLagUs: [NaN],
    sendEpochMs: [0],
    gapsUs: [],
    gapsPerRequest: [0],
    gapSumUs: [2, 4],
    gapCount: [1, 1],
  });
  const a = emptyWindow(0, { endMs: 1000, tokens: tokens(10, "a b") });
  const b = emptyWindow(0, { endMs: 1000, tokens: tokens(20, undefined) });
  const decoded = decodeWindow(encodeWindow(b), 1000);
  // JSON has no NaN nor undefined in arrays: they come back as they were, not as null.
  assert.deepEqual(decoded.tokens, b.tokens);
  const merged = mergeWindows([a, decoded]).tokens!;
  assert.deepEqual(merged.ttftUs, [10, 20]);
  assert.deepEqual(merged.texts, ["a b", undefined]);
  assert.deepEqual(merged.gapSumUs, [4, 8]);
  assert.deepEqual(merged.gapCount, [2, 2]);
});
