import assert from "node:assert/strict";
import { compareCounts, type CountFigures, countWarnings } from "./usage_check.ts";
import { distribution } from "./tokens.ts";
import type { LevelResult, LlmSummary } from "../types/results.ts";

const of = (values: Float64Array) => distribution([values], [50]);

function figures(rows: Array<Partial<Record<keyof CountFigures, number>>>): CountFigures {
  const column = (key: keyof CountFigures) => Float64Array.from(rows, (r) => r[key] ?? NaN);
  return {
    clientInput: column("clientInput"),
    serverInput: column("serverInput"),
    clientOutput: column("clientOutput"),
    usageOutput: column("usageOutput"),
    clientReasoning: column("clientReasoning"),
    usageReasoning: column("usageReasoning"),
    output: column("output"),
    requested: column("requested"),
    cached: column("cached"),
  };
}

Deno.test("usage diffs as AIPerf's formulas and examples give them", () => {
  // usage_diff_metrics.py's examples: 105 and 95 prompt tokens against 100 are 5 %, 55 and 48
  // completion tokens against 50 are 10 % and 4 %.
  const out = compareCounts(
    figures([
      { clientInput: 100, serverInput: 105, clientOutput: 50, usageOutput: 55, cached: 64 },
      { clientInput: 100, serverInput: 95, clientOutput: 50, usageOutput: 48 },
      { clientInput: 100, serverInput: 100 },
    ]),
    of,
  );
  assert.deepEqual(
    [out.usagePromptDiffPct!.min, out.usagePromptDiffPct!.max, out.usagePromptDiffPct!.avg],
    [0, 5, 10 / 3],
  );
  assert.deepEqual([out.usageCompletionDiffPct!.min, out.usageCompletionDiffPct!.max], [4, 10]);
  assert.deepEqual(out.usageCheck, {
    prompt: { compared: 3, mismatched: 2, avgDiff: 0 },
    completion: { compared: 2, mismatched: 2, avgDiff: 1.5 },
    discrepancyCount: 0,
    thresholdPct: 10,
  });
  assert.equal(out.cachedPromptTokens!.avg, 64);
  assert.equal(out.oslMismatch, undefined, "no max_tokens asked");
});

Deno.test("usage_discrepancy_count: AIPerf's six records at 10 %", () => {
  // (prompt %, completion %): (5, 3), (15, 3), (5, 12), (0, 0), (20, 15), (3, 2) -> 3.
  const pairs = [[5, 3], [15, 3], [5, 12], [0, 0], [20, 15], [3, 2]];
  const out = compareCounts(
    figures(pairs.map(([p, c]) => ({
      clientInput: 100,
      serverInput: 100 + p,
      clientOutput: 100,
      usageOutput: 100 - c,
    }))),
    of,
  );
  assert.equal(out.usageCheck!.discrepancyCount, 3);
  assert.equal(out.usageReasoningDiffPct, undefined);
  assert.equal(out.usageCheck!.prompt!.avgDiff, (5 + 15 + 5 + 0 + 20 + 3) / 6);
  assert.equal(out.usageCheck!.completion!.avgDiff, -(3 + 3 + 12 + 0 + 15 + 2) / 6);
});

Deno.test("usage_reasoning_tokens_diff: AIPerf's 52 and 48 against 50; counted as discrepancies", () => {
  const out = compareCounts(
    figures([
      { clientInput: 10, serverInput: 10, clientReasoning: 50, usageReasoning: 52 },
      { clientInput: 10, serverInput: 10, clientReasoning: 50, usageReasoning: 48 },
      { clientInput: 10, serverInput: 10, clientReasoning: 50, usageReasoning: 60 },
    ]),
    of,
  );
  assert.deepEqual([out.usageReasoningDiffPct!.min, out.usageReasoningDiffPct!.max], [4, 20]);
  assert.deepEqual(out.usageCheck!.reasoning, { compared: 3, mismatched: 3, avgDiff: 10 / 3 });
  assert.equal(out.usageCheck!.discrepancyCount, 1, "20 % is beyond 10 %");
});

Deno.test("osl_mismatch: signed percent, counted beyond min(5 %, 50 tokens)", () => {
  const out = compareCounts(
    figures([
      { requested: 100, output: 50 }, // -50 %, beyond 5 tokens
      { requested: 100, output: 120 }, // +20 %, beyond
      { requested: 100, output: 100 },
      { requested: 1000, output: 960 }, // 40 tokens: within 50
      { requested: 2000, output: 1940 }, // 60 tokens: beyond the 50-token cap (5 % would be 100)
      { output: 7 }, // no max_tokens
    ]),
    of,
  );
  assert.deepEqual(out.oslMismatch, { asked: 5, count: 3 });
  assert.deepEqual([out.oslMismatchDiffPct!.min, out.oslMismatchDiffPct!.max], [-50, 20]);
  assert.equal(out.usageCheck, undefined, "nothing to compare with usage");
});

Deno.test("one warning per kind over the run's levels", () => {
  const level = (llm: Partial<LlmSummary>) => ({ llm: llm as LlmSummary }) as LevelResult;
  const results = [
    level({
      usageCheck: {
        prompt: { compared: 10, mismatched: 10, avgDiff: 8 },
        completion: { compared: 10, mismatched: 2, avgDiff: -1 },
        discrepancyCount: 10,
        thresholdPct: 10,
      },
      oslMismatch: { asked: 10, count: 0 },
    }),
    level({
      usageCheck: {
        prompt: { compared: 30, mismatched: 30, avgDiff: 8 },
        discrepancyCount: 30,
        thresholdPct: 10,
      },
      oslMismatch: { asked: 30, count: 4 },
    }),
  ];
  assert.deepEqual(countWarnings(results, { chatTemplate: false }), [
    "The server's usage differs from the client's token counts by more than 10 % in 40 of 40 " +
    "requests: per request the server counts +8 prompt tokens (its chat template? --tokenizer " +
    "DIR --apply-chat-template counts it) and -1 output tokens on average",
    "4 of 40 answers missed the max_tokens asked by more than min(5 %, 50 tokens) " +
    "(--output-tokens-mean-deterministic asks for exact lengths: min_tokens, ignore_eos)",
  ]);
  const none = [level({ oslMismatch: { asked: 3, count: 0 } })];
  assert.deepEqual(countWarnings(none, { chatTemplate: false }), []);
  // Only what was compared is named; with the template applied the hint is another one.
  const prompts = [level({
    usageCheck: {
      prompt: { compared: 4, mismatched: 4, avgDiff: 20 },
      discrepancyCount: 4,
      thresholdPct: 10,
    },
  })];
  assert.deepEqual(countWarnings(prompts, { chatTemplate: true }), [
    "The server's usage differs from the client's token counts by more than 10 % in 4 of 4 " +
    "requests: per request the server counts +20 prompt tokens (does it apply another template " +
    "than the model directory's?) on average",
  ]);
});
