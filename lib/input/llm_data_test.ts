import assert from "node:assert/strict";
import { decodeBytesElements } from "./codec.ts";
import { InputError } from "./errors.ts";
import { isLlmEndpoint, loadLlmData, type SyntheticPrompts } from "./llm_data.ts";
import { endpointTypeOf } from "./llm_endpoints.ts";
import { loadTokenizer } from "./tokenizer.ts";

const SYNTHETIC: SyntheticPrompts = {
  inputTokensMean: 64,
  inputTokensStddev: 16,
  count: 12,
  streaming: true,
  seed: 0,
};

async function bodies(
  options: { endpoint: string; synthetic?: Partial<SyntheticPrompts>; tokenizer?: "llama" },
): Promise<Array<{ body: Record<string, unknown>; where: string }>> {
  const tokenizer = options.tokenizer && await loadTokenizer(options.tokenizer);
  const data = await loadLlmData({
    model: "m",
    endpointType: endpointTypeOf(options.endpoint)!,
    paths: [],
    synthetic: { ...SYNTHETIC, ...options.synthetic },
    ...(tokenizer ? { tokenizer } : {}),
  });
  return data.streams[0].map((step) => ({
    body: JSON.parse(new TextDecoder().decode(decodeBytesElements(step.inputs[0].data)[0])),
    where: step.where,
  }));
}

Deno.test("synthetic prompts are exactly as many tokens as drawn, the same for a seed", async () => {
  const llama = (await loadTokenizer("llama"))!;
  const made = await bodies({ endpoint: "v1/completions", tokenizer: "llama" });
  const lengths = made.map(({ body, where }) => {
    const length = Number(/\((\d+) tokens\)/.exec(where)![1]);
    assert.equal(llama.count(body.prompt as string), length, where);
    return length;
  });
  assert.ok(new Set(lengths).size > 3, "lengths vary with the deviation");
  const again = await bodies({ endpoint: "v1/completions", tokenizer: "llama" });
  assert.deepEqual(again.map((b) => b.body), made.map((b) => b.body));
  const other = await bodies({
    endpoint: "v1/completions",
    tokenizer: "llama",
    synthetic: { seed: 1 },
  });
  assert.notDeepEqual(other.map((b) => b.body), made.map((b) => b.body));
});

Deno.test("request bodies take each endpoint's shape, output lengths and streaming", async () => {
  const outputTokens = { mean: 100, stddev: 0, deterministic: true };
  const [chat] = await bodies({ endpoint: "v1/chat/completions", synthetic: { outputTokens } });
  assert.deepEqual(Object.keys(chat.body), [
    "model",
    "messages",
    "max_tokens",
    "min_tokens",
    "ignore_eos",
    "stream",
    "stream_options",
  ]);
  assert.deepEqual([chat.body.max_tokens, chat.body.min_tokens], [100, 100]);
  const [generate] = await bodies({
    endpoint: "v2/models/m/generate_stream",
    synthetic: { outputTokens: { ...outputTokens, deterministic: false } },
  });
  assert.deepEqual(Object.keys(generate.body), ["text_input", "max_tokens"]);
  const [embeddings] = await bodies({ endpoint: "v1/embeddings" });
  assert.deepEqual(Object.keys(embeddings.body), ["model", "input"]);
  const spread = await bodies({
    endpoint: "v1/completions",
    synthetic: { outputTokens: { mean: 50, stddev: 20, deterministic: false } },
  });
  assert.ok(new Set(spread.map((b) => b.body.max_tokens)).size > 3);
  assert.ok(spread.every((b) => (b.body.max_tokens as number) >= 1));
});

Deno.test("--input-file: genai-perf's JSONL, errors naming the line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/prompts.jsonl`;
    await Deno.writeTextFile(file, '{"text": "one"}\n\n{"text_input": "two"}\n');
    const made = await bodies({ endpoint: "v1/completions", synthetic: { inputFile: file } });
    assert.deepEqual(made.map((b) => b.body.prompt), ["one", "two"]);
    assert.equal(made[1].where, `"${file}" line 3`);
    await Deno.writeTextFile(file, '{"text": "one"}\n{"prompt": "two"}\n');
    await assert.rejects(
      () => bodies({ endpoint: "v1/completions", synthetic: { inputFile: file } }),
      (e: Error) => e instanceof InputError && /line 2: expected \{"text"/.test(e.message),
    );
    await Deno.writeTextFile(file, "{oops\n");
    await assert.rejects(
      () => bodies({ endpoint: "v1/completions", synthetic: { inputFile: file } }),
      /line 1: invalid JSON/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the endpoints inferperf speaks", () => {
  for (const ok of ["v1/chat/completions", "v1/embeddings", "v2/models/llama/generate"]) {
    assert.ok(isLlmEndpoint(ok), ok);
  }
  assert.ok(isLlmEndpoint("v2/models/llama/versions/2/generate_stream"));
  assert.ok(!isLlmEndpoint("v2/models/llama/infer"));
  assert.ok(!isLlmEndpoint("v1/rankings"));
});
