import assert from "node:assert/strict";
import { OPTIONS } from "./options.ts";
import { config, usageErrors } from "./testdata/usage_errors.ts";

const OPENAI = ["-m", "x", "--service-kind", "openai", "--endpoint", "v1/chat/completions"];

Deno.test("AIPerf's workload options: conversations, prefix pool, length mix", () => {
  const c = config(
    ...OPENAI,
    ...[
      "--conversation-num",
      "8",
      "--conversation-turn-mean",
      "3",
      "--conversation-turn-stddev",
      "1",
    ],
    ...["--conversation-turn-delay-mean", "50", "--session-concurrency", "2"],
    ...["--prefix-prompt-pool-size", "4", "--prefix-prompt-length", "64"],
    ...["--sequence-distribution", "128,64:60;256,32:40"],
  );
  const s = c.syntheticPrompts;
  assert.equal(s.count, 8);
  assert.deepEqual(s.turns, { mean: 3, stddev: 1 });
  assert.deepEqual(s.turnDelay, { mean: 50, stddev: 0, ratio: 1 });
  assert.deepEqual(s.prefixPool, { size: 4, length: 64 });
  assert.deepEqual(s.lengthMix?.map((p) => [p.isl, p.osl, p.percent]), [[128, 64, 60], [
    256,
    32,
    40,
  ]]);
  // Nothing given: the plan is as before.
  const plain = config(...OPENAI).syntheticPrompts;
  assert.deepEqual(
    [plain.turns, plain.prefixPool, plain.lengthMix, plain.datasetType, plain.count],
    [undefined, undefined, undefined, undefined, 100],
  );
});

Deno.test("workload options: what they need and exclude, one line each", () => {
  assert.deepEqual(
    usageErrors(() => config(...OPENAI, "--conversation-turn-mean", "2")),
    [
      "Conversations of several turns need --session-concurrency N: each turn goes after the " +
      "previous answer, with the history",
    ],
  );
  assert.deepEqual(
    usageErrors(() =>
      config(
        ...OPENAI,
        ...["--custom-dataset-type", "mooncake_trace", "--public-dataset", "sharegpt"],
        ...["--prefix-prompt-length", "8", "--sequence-distribution", "1,1:50"],
        ...["--conversation-num", "2", "--num-prompts", "3"],
      )
    ),
    [
      "Options --custom-dataset-type and --public-dataset exclude each other: give one",
      "Option --custom-dataset-type needs --input-file (the dataset file)",
      "Options --conversation-num and --num-prompts are one count: give one",
      "Options --prefix-prompt-pool-size and --prefix-prompt-length go together (both > 0)",
      '--sequence-distribution "1,1:50": the weights add up to 50, not 100 (percent)',
    ],
  );
  assert.deepEqual(
    usageErrors(() => config("-m", "x", "--custom-dataset-type", "single_turn")),
    [
      "Options --custom-dataset-type apply to --service-kind openai only",
      "Option --custom-dataset-type needs --input-file (the dataset file)",
    ],
  );
  assert.deepEqual(
    usageErrors(() =>
      config(...OPENAI, "--custom-dataset-type", "multi_turn", "--input-file", "m.jsonl")
    ),
    [
      "A multi_turn dataset needs --session-concurrency N: each turn goes after the previous " +
      "answer, with the history",
    ],
  );
});

Deno.test("a mooncake_trace with timestamps replays at them (--fixed-schedule), as AIPerf", async () => {
  const dir = await Deno.makeTempDir();
  const timed = `${dir}/timed.jsonl`;
  await Deno.writeTextFile(timed, '\n{"timestamp": 0, "input_length": 8}\n');
  const untimed = `${dir}/untimed.jsonl`;
  await Deno.writeTextFile(untimed, '{"input_length": 8}\n');
  const trace = (path: string, ...more: string[]) =>
    config(...OPENAI, "--custom-dataset-type", "mooncake_trace", "--input-file", path, ...more);
  assert.equal(trace(timed).fixedSchedule, true);
  assert.equal(trace(timed).loadMode, "custom_intervals");
  assert.equal(trace(untimed).fixedSchedule, false);
  assert.equal(trace(timed, "--concurrency-range", "4").fixedSchedule, false);
  assert.deepEqual(
    trace(timed, "--fixed-schedule-start-offset", "10", "--fixed-schedule-end-offset", "90")
      .syntheticPrompts.traceWindow,
    { autoOffset: false, startMs: 10, endMs: 90 },
  );
  assert.deepEqual(
    usageErrors(() =>
      trace(timed, "--fixed-schedule-auto-offset", "--fixed-schedule-start-offset", "10")
    ),
    ["Options --fixed-schedule-auto-offset and --fixed-schedule-start-offset exclude each other"],
  );
  assert.deepEqual(
    usageErrors(() =>
      config(...OPENAI, "--fixed-schedule-start-offset", "9", "--fixed-schedule-end-offset", "1")
    ),
    [
      "The --fixed-schedule-* offsets apply to a timed --input-file",
      "--fixed-schedule-start-offset 9 is after --fixed-schedule-end-offset 1",
    ],
  );
});

Deno.test("AIPerf's and genai-perf's spellings of the workload options are aliases", () => {
  const c = config(
    ...OPENAI,
    ...["--num-conversations", "5", "--session-turns-mean", "2", "--session-concurrency", "1"],
    ...["--num-prefix-prompts", "3", "--prompt-prefix-length", "16", "--seq-dist", "8,4:100"],
    "--isl-block-size=64",
  );
  const s = c.syntheticPrompts;
  assert.equal(s.count, 5);
  assert.equal(s.turns?.mean, 2);
  assert.deepEqual(s.prefixPool, { size: 3, length: 16 });
  assert.equal(s.lengthMix?.length, 1);
  assert.equal(s.blockSize, 64);
  // No alias is another option's name.
  const names = new Set(OPTIONS.map((o) => o.name));
  for (const alias of OPTIONS.flatMap((o) => o.aliases ?? [])) {
    assert.ok(!names.has(alias), `--${alias} is an option and an alias`);
    names.add(alias);
  }
});

Deno.test("--output-tokens-mean-deterministic makes a mix's or a file's lengths exact", () => {
  const mix = config(
    ...OPENAI,
    "--sequence-distribution",
    "8,4:100",
    "--output-tokens-mean-deterministic",
  );
  assert.equal(mix.syntheticPrompts.exactLengths, true);
  assert.equal(mix.syntheticPrompts.outputTokens, undefined);
  const trace = config(
    ...OPENAI,
    ...[
      "--custom-dataset-type",
      "mooncake_trace",
      "--input-file",
      "t.jsonl",
      "--concurrency-range",
      "1",
    ],
    "--output-tokens-mean-deterministic",
  );
  assert.equal(trace.syntheticPrompts.exactLengths, true);
  assert.deepEqual(usageErrors(() => config(...OPENAI, "--output-tokens-mean-deterministic")), [
    "Option --output-tokens-mean-deterministic needs --output-tokens-mean (or lengths of " +
    "--sequence-distribution, a trace or ShareGPT)",
  ]);
});
