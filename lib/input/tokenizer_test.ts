import assert from "node:assert/strict";
import { loadTokenizer } from "./tokenizer.ts";

/**
 * llama-tokenizer-js's own test cases (its defaultTests), without the BOS
 * token they start with: inferperf counts as Hugging Face's
 * encode(add_special_tokens=False) does.
 */
const LLAMA_CASES: Array<[string, number[]]> = [
  ["grabbed", [2646, 1327, 287]],
  [" grabbed", [29871, 2646, 1327, 287]],
  ["           grabbed", [9651, 2646, 1327, 287]],
  ["\n", [29871, 13]],
  [" \n", [259, 13]],
  ["\ttabs\t\t\t\tout here", [29871, 12, 21175, 12, 12, 12, 12, 449, 1244]],
  ["ax\n####\nboo", [4853, 13, 4136, 13, 833, 29877]],
  ["镇", [29871, 30411]],
  ["🦙", [29871, 243, 162, 169, 156]],
  ["🦙Ꙋ", [29871, 243, 162, 169, 156, 237, 156, 141]],
  ["Ꙋ🦙", [29871, 237, 156, 141, 243, 162, 169, 156]],
];

Deno.test("llama: the package's reference encodings", async () => {
  const tokenizer = (await loadTokenizer("llama"))!;
  for (const [text, ids] of LLAMA_CASES) {
    assert.deepEqual(tokenizer.encode(text), ids, JSON.stringify(text));
    assert.equal(tokenizer.count(text), ids.length);
    assert.equal(tokenizer.decode(ids), text);
  }
  assert.equal(tokenizer.count(""), 0);
});

/** gpt-tokenizer's own test plans (data/TestPlans.txt) for cl100k_base. */
async function cl100kPlans(): Promise<Array<[string, number[]]>> {
  const url = import.meta.resolve("../../node_modules/gpt-tokenizer/data/TestPlans.txt");
  const text = await Deno.readTextFile(new URL(url));
  const plans: Array<[string, number[]]> = [];
  for (const block of text.split(/\n\n+/)) {
    const match = /^EncodingName: cl100k_base\nSample: ([\s\S]*)\nEncoded: (\[.*\])$/.exec(
      block.trim(),
    );
    if (match) plans.push([match[1], JSON.parse(match[2])]);
  }
  return plans;
}

Deno.test("cl100k_base: the package's reference encodings", async () => {
  const tokenizer = (await loadTokenizer("cl100k_base"))!;
  const plans = await cl100kPlans();
  assert.ok(plans.length >= 20, `${plans.length} test plans`);
  for (const [text, ids] of plans) {
    assert.equal(tokenizer.count(text), ids.length, JSON.stringify(text));
    assert.deepEqual(tokenizer.encode(text), ids);
  }
  // Special-token text in a prompt is text, not a refused special token.
  assert.ok(tokenizer.count("<|endoftext|>") > 1);
});

Deno.test("none: no tokenizer; each is loaded once", async () => {
  assert.equal(await loadTokenizer("none"), undefined);
  assert.equal(await loadTokenizer("llama"), await loadTokenizer("llama"));
});
