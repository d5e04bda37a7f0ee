import assert from "node:assert/strict";
import { InputError } from "./errors.ts";
import { mulberry32 } from "./generate.ts";
import { parseLengthMix, positiveNormalInteger, PromptMaker, sampleLengthMix } from "./prompts.ts";
import { loadTokenizer } from "./tokenizer.ts";

Deno.test("hash blocks: a hash id is the same text wherever it appears, lengths exact", async () => {
  const llama = (await loadTokenizer("llama"))!;
  const maker = new PromptMaker(llama);
  const rng = mulberry32(1);
  const a = maker.fromBlocks(40, { hashIds: [7, 8, 9], blockSize: 16, rng });
  const b = maker.fromBlocks(37, { hashIds: [7, 8, 10], blockSize: 16, rng });
  const c = maker.fromBlocks(16, { hashIds: [11], blockSize: 16, rng });
  assert.equal(llama.count(a), 40);
  assert.equal(llama.count(b), 37);
  assert.equal(llama.count(c), 16);
  const words = (s: string) => s.split(" ");
  // The two shared blocks (32 tokens) open both prompts; the third differs.
  assert.deepEqual(words(a).slice(0, 32), words(b).slice(0, 32));
  assert.notDeepEqual(words(a).slice(32, 37), words(b).slice(32, 37));
  // A block used in part first and whole later is one block: the part is its start.
  const whole = maker.fromBlocks(32, { hashIds: [7, 9], blockSize: 16, rng });
  assert.deepEqual(words(whole).slice(16, 24), words(a).slice(32, 40));
  assert.throws(
    () => maker.fromBlocks(50, { hashIds: [1, 2], blockSize: 16, rng }),
    (e) =>
      e instanceof InputError && /last block would hold 34; it must hold 1 to 16/.test(e.message),
  );
});

Deno.test("--sequence-distribution: AIPerf's three spellings, weights in percent", () => {
  const semicolon = parseLengthMix("128,64:70; 512|20,256|5:30");
  assert.deepEqual(semicolon, [
    { isl: 128, islStddev: 0, osl: 64, oslStddev: 0, percent: 70 },
    { isl: 512, islStddev: 20, osl: 256, oslStddev: 5, percent: 30 },
  ]);
  assert.deepEqual(parseLengthMix("[(128,64):70,(512|20,256|5):30]"), semicolon);
  assert.deepEqual(
    parseLengthMix(
      '{"pairs": [{"isl": 128, "osl": 64, "prob": 70}, ' +
        '{"isl": 512, "isl_stddev": 20, "osl": 256, "osl_stddev": 5, "prob": 30}]}',
    ),
    semicolon,
  );
  for (
    const [bad, why] of [
      ["128,64:70", /add up to 70, not 100/],
      ["128:100", /can not read "128:100"/],
      ["0,64:100", /lengths must be >= 1/],
      ['{"pairs": [{"isl": 1}]}', /pairs\[0\] needs a number "osl"/],
    ] as const
  ) {
    assert.throws(() => parseLengthMix(bad), (e) => e instanceof InputError && why.test(e.message));
  }
});

Deno.test("length mix draws pairs by weight, deterministic for a seed", () => {
  const mix = parseLengthMix("100,10:75;200,20:25");
  const draw = (seed: number) => {
    const rng = mulberry32(seed);
    return Array.from({ length: 4000 }, () => sampleLengthMix(mix, rng));
  };
  const drawn = draw(3);
  assert.deepEqual(draw(3), drawn);
  const short = drawn.filter((d) => d.isl === 100 && d.osl === 10).length;
  assert.equal(short + drawn.filter((d) => d.isl === 200 && d.osl === 20).length, 4000);
  assert.ok(Math.abs(short / 4000 - 0.75) < 0.03, `75 % short, got ${short / 40} %`);
});

Deno.test("AIPerf's positive normal integer: the mean when no deviation, never below 0", () => {
  const rng = mulberry32(5);
  assert.equal(positiveNormalInteger(rng, 3, 0), 3);
  const turns = Array.from({ length: 2000 }, () => positiveNormalInteger(rng, 2, 3));
  assert.ok(turns.every((n) => Number.isInteger(n) && n >= 0));
  assert.ok(turns.some((n) => n > 5));
});
