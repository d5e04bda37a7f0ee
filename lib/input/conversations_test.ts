import assert from "node:assert/strict";
import { decodeBytesElements } from "./codec.ts";
import type { DataStep } from "./data_set.ts";
import { InputError } from "./errors.ts";
import { loadLlmData, type SyntheticPrompts } from "./llm_data.ts";
import { parseLengthMix } from "./prompts.ts";
import { loadTokenizer } from "./tokenizer.ts";

const llama = (await loadTokenizer("llama"))!;

const BASE: SyntheticPrompts = {
  inputTokensMean: 20,
  inputTokensStddev: 0,
  count: 6,
  streaming: false,
  seed: 4,
  sessions: true,
};

async function steps(synthetic: Partial<SyntheticPrompts>): Promise<DataStep[]> {
  const data = await loadLlmData({
    model: "m",
    endpointType: "chat",
    paths: [],
    synthetic: { ...BASE, ...synthetic },
    tokenizer: llama,
  });
  return data.streams[0];
}

type Body = { messages: Array<{ content: unknown }>; max_tokens?: number };
const bodyOf = (step: DataStep): Body =>
  JSON.parse(new TextDecoder().decode(decodeBytesElements(step.inputs[0].data)[0]));
const textOf = (step: DataStep) => bodyOf(step).messages[0].content as string;

async function file(lines: unknown[], name = "data.jsonl"): Promise<string> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return path;
}

Deno.test("synthetic conversations: turns and delays as drawn, session ids, the same for a seed", async () => {
  const options = {
    count: 40,
    turns: { mean: 3, stddev: 1 },
    turnDelay: { mean: 100, stddev: 0, ratio: 0.5 },
  };
  const made = await steps(options);
  const sessions = Map.groupBy(made, (s) => s.sessionId!);
  assert.equal(sessions.size, 40);
  const counts = [...sessions.values()].map((turns) => turns.length);
  assert.ok(counts.every((n) => n >= 1) && new Set(counts).size > 1, `turns vary: ${counts}`);
  const mean = counts.reduce((a, b) => a + b) / counts.length;
  assert.ok(Math.abs(mean - 3.4) < 0.6, `about 3 turns (rounded up), got ${mean}`);
  for (const turns of sessions.values()) {
    // AIPerf's delay comes before a later turn; inferperf waits it after the previous answer.
    assert.deepEqual(turns.map((t) => t.delayMs), [...turns.slice(1).map(() => 50), undefined]);
    for (const turn of turns) assert.equal(llama.count(textOf(turn)), 20, turn.where);
  }
  assert.match(made[1].where, /^synthetic conversation 0 turn 1 \(20 tokens\)$/);
  const again = await steps(options);
  assert.deepEqual(again.map(textOf), made.map(textOf));
});

Deno.test("prefix pool: each conversation's first turn starts with one of N shared prefixes", async () => {
  const made = await steps({
    count: 30,
    turns: { mean: 2, stddev: 0 },
    prefixPool: { size: 3, length: 12 },
  });
  const firsts = made.filter((_, i) => i % 2 === 0).map(textOf);
  const prefixes = new Set(firsts.map((t) => t.split(" ").slice(0, 12).join(" ")));
  assert.equal(prefixes.size, 3, "every prefix of the pool drawn, no other");
  for (const prefix of prefixes) assert.equal(llama.count(prefix), 12);
  for (const first of firsts) assert.equal(llama.count(first), 32);
  // Later turns carry no prefix (the history already holds it).
  for (const later of made.filter((_, i) => i % 2 === 1).map(textOf)) {
    assert.equal(llama.count(later), 20);
  }
});

Deno.test("length mix: each prompt one pair's ISL, its OSL as max_tokens", async () => {
  const made = await steps({ count: 200, lengthMix: parseLengthMix("16,8:50;48,24:50") });
  const pairs = made.map((s) => `${llama.count(textOf(s))},${bodyOf(s).max_tokens}`);
  assert.deepEqual(new Set(pairs), new Set(["16,8", "48,24"]));
  const short = pairs.filter((p) => p === "16,8").length;
  assert.ok(short > 70 && short < 130, `about half short, got ${short}`);
});

Deno.test("single_turn and multi_turn files: texts, timestamps, sessions and delays", async () => {
  const single = await steps({
    inputFile: await file([
      { text: "hello there", timestamp: 0 },
      { texts: ["a", "b"], timestamp: 25 },
      { texts: [{ name: "q", contents: ["c"] }], role: "system" },
    ]),
    datasetType: "single_turn",
  });
  assert.deepEqual(single.map((s) => bodyOf(s).messages[0].content), [
    "hello there",
    [{ type: "text", text: "a" }, { type: "text", text: "b" }],
    "c",
  ]);
  assert.deepEqual(single.map((s) => s.timestampMs), [0, 25, undefined]);
  // AIPerf's "role" of a turn; "user" by default.
  const roles = single.map((s) => (bodyOf(s).messages[0] as { role?: string }).role);
  assert.deepEqual(roles, ["user", "user", "system"]);
  assert.equal(new Set(single.map((s) => s.sessionId)).size, 3);

  const multi = await steps({
    inputFile: await file([
      { session_id: "s1", turns: [{ text: "one" }, { text: "two", delay: 300 }] },
      { session_id: "s2", turns: [{ text: "x" }] },
      { session_id: "s1", turns: [{ text: "three", delay: 40 }] },
    ]),
    datasetType: "multi_turn",
  });
  assert.deepEqual(
    multi.map((s) => [s.sessionId, textOf(s), s.delayMs]),
    [["s1", "one", 300], ["s1", "two", 40], ["s1", "three", undefined], ["s2", "x", undefined]],
  );
  await assert.rejects(
    steps({ inputFile: await file([{ image: "a.png" }]), datasetType: "single_turn" }),
    (e) => e instanceof InputError && /line 1: "image" is not supported here/.test(e.message),
  );
  await assert.rejects(
    steps({ inputFile: await file([{ turns: [] }]), datasetType: "multi_turn" }),
    (e) => e instanceof InputError && /line 1: expected \{"session_id"/.test(e.message),
  );
});

Deno.test("random_pool: --conversation-num draws from a file, or one entry per file of a directory", async () => {
  const path = await file([{ text: "p" }, { text: "q" }, { text: "r" }]);
  const drawn = await steps({ inputFile: path, datasetType: "random_pool", count: 50 });
  assert.equal(drawn.length, 50);
  assert.deepEqual(new Set(drawn.map(textOf)), new Set(["p", "q", "r"]));
  const dir = path.replace(/\/[^/]+$/, "");
  await Deno.writeTextFile(
    `${dir}/passages.jsonl`,
    '{"texts": [{"name": "passage", "contents": ["x"]}]}\n',
  );
  const merged = await steps({ inputFile: dir, datasetType: "random_pool", count: 4 });
  for (const step of merged) {
    const parts = bodyOf(step).messages[0].content as Array<{ text: string }>;
    assert.match(parts[0].text, /^[pqr]$/, "data.jsonl sorts first");
    assert.equal(parts[1].text, "x");
  }
});

Deno.test("mooncake_trace: lengths, shared hash blocks, max_tokens, time order", async () => {
  const made = await steps({
    inputFile: await file([
      { timestamp: 50, input_length: 40, output_length: 5, hash_ids: [1, 2, 3] },
      { timestamp: 0, input_length: 35, output_length: 7, hash_ids: [1, 2, 4] },
      { timestamp: 10, input_length: 10, output_length: 3 },
      { timestamp: 20, text_input: "given text", output_length: 2 },
    ]),
    datasetType: "mooncake_trace",
    blockSize: 16,
  });
  assert.deepEqual(made.map((s) => s.timestampMs), [0, 10, 20, 50]);
  assert.deepEqual(made.map((s) => bodyOf(s).max_tokens), [7, 3, 2, 5]);
  const exact = await steps({
    inputFile: await file([{ input_length: 4, output_length: 6 }]),
    datasetType: "mooncake_trace",
    exactLengths: true,
  });
  assert.deepEqual(
    JSON.parse(new TextDecoder().decode(decodeBytesElements(exact[0].inputs[0].data)[0])),
    {
      model: "m",
      messages: [{ role: "user", content: textOf(exact[0]) }],
      max_tokens: 6,
      min_tokens: 6,
      ignore_eos: true,
    },
  );
  assert.deepEqual(made.map((s) => llama.count(textOf(s))), [35, 10, 2, 40]);
  const words = (s: DataStep) => textOf(s).split(" ");
  assert.deepEqual(words(made[0]).slice(0, 32), words(made[3]).slice(0, 32));
  assert.notDeepEqual(words(made[0]).slice(32), words(made[3]).slice(32, 35));
  // AIPerf's offsets: a part of the trace, its schedule from the part's start or first record.
  const trace = await file([0, 100, 200, 300].map((timestamp) => ({ timestamp, input_length: 4 })));
  const part = (traceWindow: SyntheticPrompts["traceWindow"]) =>
    steps({ inputFile: trace, datasetType: "mooncake_trace", traceWindow }).then((s) =>
      s.map((step) => step.timestampMs)
    );
  assert.deepEqual(await part({ autoOffset: false, startMs: 100, endMs: 200 }), [0, 100]);
  assert.deepEqual(await part({ autoOffset: false, startMs: 150 }), [50, 150]);
  assert.deepEqual(await part({ autoOffset: true, endMs: 250 }), [0, 100, 200]);
  await assert.rejects(
    part({ autoOffset: false, startMs: 400 }),
    (e) =>
      e instanceof InputError && /no record within the --fixed-schedule-\* offsets/.test(e.message),
  );
  // A trace's "session_id" makes multi-turn sessions, which run with --session-concurrency.
  const sessions = await file([
    { session_id: "a", input_length: 8, output_length: 2 },
    { session_id: "a", delay: 30, input_length: 4, output_length: 2 },
  ]);
  const turns = await steps({ inputFile: sessions, datasetType: "mooncake_trace" });
  assert.deepEqual(turns.map((s) => [s.sessionId, s.delayMs]), [["a", 30], ["a", undefined]]);
  await assert.rejects(
    steps({ inputFile: sessions, datasetType: "mooncake_trace", sessions: false }),
    (e) =>
      e instanceof InputError &&
      /line 2: session "a" has 2 turns, which need --session-concurrency N/.test(e.message),
  );
  await assert.rejects(
    steps({
      inputFile: await file([{ input_length: 600, hash_ids: [1] }]),
      datasetType: "mooncake_trace",
    }),
    (e) =>
      e instanceof InputError &&
      /line 1: .*600 does not fit 1 hash ids of 512-token/.test(e.message),
  );
});

Deno.test("ShareGPT: the first message as prompt, the answer's length as max_tokens, AIPerf's filter", async () => {
  const long = "word ".repeat(1100);
  const dir = await Deno.makeTempDir();
  const path = `${dir}/sharegpt.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify([
      {
        id: "a",
        conversations: [{ from: "human", value: "what is a good name for a cat" }, {
          from: "gpt",
          value: "call it Whiskers or maybe Socks",
        }],
      },
      { id: "b", conversations: [{ from: "human", value: "hi" }, { from: "gpt", value: "hello" }] },
      { id: "c", conversations: [{ from: "human", value: long }, { from: "gpt", value: long }] },
      { id: "d", conversations: [{ from: "human", value: "only one message here" }] },
    ]),
  );
  const made = await steps({ inputFile: path, datasetType: "sharegpt" });
  assert.deepEqual(made.map(textOf), ["what is a good name for a cat"]);
  assert.equal(bodyOf(made[0]).max_tokens, llama.count("call it Whiskers or maybe Socks"));
  const overridden = await steps({
    inputFile: path,
    datasetType: "sharegpt",
    outputTokens: { mean: 9, stddev: 0, deterministic: false },
  });
  assert.deepEqual(overridden.map((s) => bodyOf(s).max_tokens), [9]);
});
