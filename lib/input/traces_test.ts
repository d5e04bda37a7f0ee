import assert from "node:assert/strict";
import { mulberry32 } from "./generate.ts";
import { InputError } from "./errors.ts";
import { PromptMaker } from "./prompts.ts";
import { loadTokenizer } from "./tokenizer.ts";
import { aiperfInputs, azureTrace, burstGpt, rawPayloads, replayed } from "./traces.ts";

const FIXTURES = new URL("../../fixtures/traces/", import.meta.url).pathname;
const llama = (await loadTokenizer("llama"))!;
const context = () => ({ maker: new PromptMaker(llama), rng: mulberry32(1) });

const summary = (conversations: Awaited<ReturnType<typeof burstGpt>>) =>
  conversations.map(({ turns: [t] }) => [t.timestampMs, llama.count(t.texts[0]), t.maxTokens]);

Deno.test("BurstGPT: each row a request of its tokens at its time, failed rows left out", async () => {
  const trace = await burstGpt({ path: `${FIXTURES}burstgpt.csv`, ...context() });
  // The 0.8 s row answered 0 tokens: a failure in the trace.
  assert.deepEqual(summary(trace), [
    [0, 24, 6],
    [400, 12, 4],
    [1200, 18, 9],
    [3601200, 30, 5],
  ]);
});

Deno.test("Azure traces: TIMESTAMP to ms, rows in time order from the first", async () => {
  const trace = await azureTrace({ path: `${FIXTURES}azure_conv.csv`, ...context() });
  const rows = summary(trace).map(([ms, isl, osl]) => [Math.round(ms! * 1000) / 1000, isl, osl]);
  assert.deepEqual(rows, [[0, 48, 10], [314.579, 31, 8], [500, 11, 27], [1000, 74, 14]]);
});

Deno.test("trace files: a missing column or a bad value is one line naming it", async () => {
  const path = await Deno.makeTempFile({ suffix: ".csv" });
  try {
    const refused = async (text: string, load: typeof burstGpt, pattern: RegExp) => {
      await Deno.writeTextFile(path, text);
      await assert.rejects(() => load({ path, ...context() }), (e: Error) => {
        assert.ok(e instanceof InputError);
        assert.match(e.message, pattern);
        return true;
      });
    };
    await refused(
      "Timestamp,Model,Request tokens\n0,x,3\n",
      burstGpt,
      /line 1: no column "Response tokens" \(the header names "Timestamp", "Model"/,
    );
    await refused(
      "Timestamp,Request tokens,Response tokens\n0,x,3\n",
      burstGpt,
      /line 2: "Request tokens" must be an integer >= 0, got "x"/,
    );
    await refused(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n16/11/2023,3,4\n",
      azureTrace,
      /line 2: "TIMESTAMP" must be a date and time/,
    );
    await refused(
      "Timestamp,Request tokens,Response tokens\n0,3,0\n",
      burstGpt,
      /no row has both input and output tokens/,
    );
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("replay controls: speedup divides, the gap cap shortens idle stretches, or no times", async () => {
  const load = () => burstGpt({ path: `${FIXTURES}burstgpt.csv`, ...context() });
  const times = (c: Awaited<ReturnType<typeof load>>) => c.map(({ turns: [t] }) => t.timestampMs);
  assert.deepEqual(times(replayed(await load(), { speedup: 4, ignoreTimestamps: false })), [
    0,
    100,
    300,
    900300,
  ]);
  assert.deepEqual(
    times(replayed(await load(), { speedup: 2, maxGapMs: 500, ignoreTimestamps: false })),
    [0, 200, 600, 1100],
  );
  assert.deepEqual(
    times(replayed(await load(), { speedup: 1, ignoreTimestamps: true })),
    [undefined, undefined, undefined, undefined],
  );
});

Deno.test("AIPerf's raw payloads and inputs.json: bodies as written", async () => {
  const raw = await rawPayloads(`${FIXTURES}raw_payload.jsonl`);
  assert.equal(raw.length, 2);
  assert.equal(raw[0].turns[0].body?.temperature, 0.2);
  assert.equal(raw[1].turns[0].body?.stream, true);
  const inputs = await aiperfInputs(`${FIXTURES}aiperf_inputs.json`);
  assert.deepEqual(inputs.map((c) => c.sessionId), [
    "a5cdb1fe-19a3-4ed0-9e54-ed5ed6dc5578",
    "77aa5b0e-b305-423f-88d5-c00da1892599",
  ]);
  assert.equal(inputs[1].turns[0].body?.max_tokens, 2);
});
